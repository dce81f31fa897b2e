"""What the embedded snapshot is built to contain: the events to keep, and each trap's reason."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT_XML = ROOT / "snapshot" / "wiki" / "export.xml"

SNAPSHOT_EVENTS = {
    "2026 Meridal River floods",
    "2026 Valdran general election",
    "2026 Korvenna Cup",
    "Tessel Pass rail accident",
    "2026 Lantern Tide Festival",
    "2026 Halvern earthquake",
    "Orlin Horizon 2026",
    "Cyclone Imre",
    "2026 Estmark wildfires",
    "Brannock Bridge collapse",
    "2026 Korvenna Marathon",
    "2026 Sorrel Bay oil spill",
    "Northern Air Flight 311",
}
SNAPSHOT_TRAPS = {
    "2025 Meridal dock strike": "created_before_window",
    "2026 Korvenna tramway strike": "created_before_window",
    "Mira Castellane": "biography",
    "The Glass Harbour": "not_event",
    "2026 Ostrel ferry fire": "too_short",
    "2026 Valdran general strike": "too_long",
    "Lantern Tide": "disambiguation",
    "Korvenna tramway strike": "redirect",
    "List of floods in Valdra": "list",
    "Template:Cite web": "not_article",
}

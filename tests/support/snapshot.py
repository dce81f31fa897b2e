"""What the embedded snapshot is built to contain: the events to keep, and each trap's reason."""

import json
import shutil
from pathlib import Path
from typing import Any

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
    "2026 Brannock dockworkers' strike": "too_short",
    "2026 Valdran general strike": "too_long",
    "Lantern Tide": "disambiguation",
    "Korvenna tramway strike": "redirect",
    "List of floods in Valdra": "list",
    "Template:Cite web": "not_article",
}


def live_web_missing_one_query(
    tmp: Path, providers: list[str]
) -> tuple[Any, str, list[dict[str, Any]]]:
    """Live ``sources`` settings, asking ``providers``, over a copy of the snapshot's archive and
    a search log that lacks the first event's query, so the web stage must ask a live provider
    for it; returns the settings, that query and its recorded hits (what it should answer)."""
    from pipelines.settings import load_params

    web = ROOT / "snapshot" / "web"
    lines = (web / "search.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    asked = entries[0]["query"]
    kept = [line for line, e in zip(lines, entries, strict=True) if e["query"] != asked]
    (tmp / "search.jsonl").write_text("\n".join(kept) + "\n")
    shutil.copytree(web / "archive", tmp / "archive")
    web_settings = load_params(ROOT / "params.yaml").web
    search = web_settings.search.model_copy(update={"providers": providers})
    sources = web_settings.model_copy(
        update={"mode": "live", "archive": tmp / "archive", "search_log": tmp / "search.jsonl",
                "search": search}
    )  # fmt: skip
    return sources, asked, [e for e in entries if e["query"] == asked]

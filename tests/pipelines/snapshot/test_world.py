"""The world generator: copy 0 is the snapshot byte for byte, further copies rename, rescale,
redate and reorder consistently, the same seed writes the same bytes, and a world the disk
cannot hold is refused before anything is written."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipelines.errors import BenchsmithError
from pipelines.settings import Params
from pipelines.snapshot import world as world_module
from pipelines.snapshot.world import World, WorldTooLargeError, grow
from pipelines.snapshot.world_text import CopyRewrite
from tests.conftest import ROOT

SNAPSHOT = ROOT / "snapshot"


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory, params: Params) -> Path:
    out = tmp_path_factory.mktemp("world") / "k3"
    grow(SNAPSHOT, out, 3, params, seed=7, record=False)
    return out


def test_one_copy_is_the_snapshot_byte_for_byte(tmp_path: Path, params: Params) -> None:
    grow(SNAPSHOT, tmp_path / "k1", 1, params, record=False)
    for name in ("wiki/export.xml", "web/pages.jsonl", "web/traps.yaml"):
        assert (tmp_path / "k1" / name).read_bytes() == (SNAPSHOT / name).read_bytes(), name
    assert _files(tmp_path / "k1" / "web" / "site") == _files(SNAPSHOT / "web" / "site")


def test_the_same_seed_writes_the_same_world(grown: Path, tmp_path: Path, params: Params) -> None:
    grow(SNAPSHOT, tmp_path / "again", 3, params, seed=7, record=False)
    grow(SNAPSHOT, tmp_path / "other", 3, params, seed=8, record=False)
    again, other = (
        (tmp_path / "again" / "wiki" / "export.xml").read_bytes(),
        (tmp_path / "other" / "wiki" / "export.xml").read_bytes(),
    )
    assert again == (grown / "wiki" / "export.xml").read_bytes()
    assert other != again
    assert _files(tmp_path / "again" / "web") == _files(grown / "web")


def _pages(export: Path) -> list[ET.Element]:
    root = ET.parse(export).getroot()
    ns = root.tag[: root.tag.index("}") + 1]
    return [p for p in root.iter(f"{ns}page")], ns  # type: ignore[return-value]


def test_every_article_page_is_copied_with_a_new_title_and_ids(grown: Path) -> None:
    pages, ns = _pages(grown / "wiki" / "export.xml")
    snapshot_pages, _ = _pages(SNAPSHOT / "wiki" / "export.xml")
    articles = [p for p in snapshot_pages if p.findtext(f"{ns}ns") == "0"]
    templates = len(snapshot_pages) - len(articles)
    assert len(pages) == 3 * len(articles) + templates
    titles = [p.findtext(f"{ns}title") for p in pages]
    assert len(set(titles)) == len(titles)
    ids = [p.findtext(f"{ns}id") for p in pages]
    revisions = [r.findtext(f"{ns}id") for p in pages for r in p.iter(f"{ns}revision")]
    assert len(set(ids)) == len(ids) and len(set(revisions)) == len(revisions)


def test_copies_keep_creation_inside_or_before_the_window(grown: Path, params: Params) -> None:
    start = datetime.combine(params.wiki.created_after, datetime.min.time(), tzinfo=UTC)
    end = params.wiki.dump.snapshot_at
    pages, ns = _pages(grown / "wiki" / "export.xml")
    by_base: dict[str, list[datetime]] = {}
    firsts = Counter()
    for page in pages:
        stamps = [
            datetime.strptime(t.text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            for t in page.iter(f"{ns}timestamp")
        ]
        pid = int(page.findtext(f"{ns}id")) % 100_000
        by_base.setdefault(str(pid), []).append(min(stamps))
        assert max(stamps) < end
        firsts[min(stamps) >= start] += 1
    for created in by_base.values():
        inside = [t >= start for t in created]
        assert len(set(inside)) == 1  # every copy on the same side of the window's start
    moved = [len(set(c)) for c in by_base.values() if len(c) == 3]
    assert max(moved) == 3  # copies are created on days of their own


def test_a_copy_agrees_with_itself_across_wiki_and_web(grown: Path) -> None:
    manifest = (grown / "web" / "pages.jsonl").read_text("utf-8").splitlines()
    export = (grown / "wiki" / "export.xml").read_text("utf-8")
    events = {line.split('"event": "', 1)[1].split('"', 1)[0] for line in manifest}
    for event in events:  # every search query is an article title of the grown wiki
        assert f"<title>{event}</title>" in export, event
    urls = re.findall(r'"url": "([^"]+)"', "\n".join(manifest))
    site = grown / "web" / "site"
    served = [u for u in urls if (site / u.split("//", 1)[1]).with_suffix("").exists()
              or Path(str(site / u.split("//", 1)[1]) + ".html").exists()]  # fmt: skip
    assert len(served) / len(urls) > 0.9
    assert sum("/c2/" in u for u in urls) == sum("/c1/" in u for u in urls) > 0


def test_text_rewriting_is_consistent_and_keeps_years() -> None:
    rewrite = CopyRewrite(2, 0, {"Imre": "Zorvan", "Valdra": "Kestora"}, frozenset({"a.example"}))
    text = (
        "Cyclone Imre struck Valdra on 14 January 2026, killing 1,100 people in 1962 terms. "
        "Imre weakened by January 20, 2026. See https://a.example/news/imre-valdra and "
        "https://b.example/imre."
    )
    out = rewrite.text(text, shift_days=10)
    assert "Imre" not in out and out.count("Zorvan") == 2 and "Kestora" in out
    assert "24 January 2026" in out and "January 30, 2026" in out
    assert "1962" in out and "1,100" not in out and re.search(r"\b\d{1,3},\d{3} people", out)
    assert "https://a.example/c2/news/zorvan-kestora" in out
    assert "https://b.example/imre." in out  # other hosts are left alone
    assert rewrite.text(text, shift_days=10) == out
    assert CopyRewrite(0, 0, {"Imre": "Zorvan"}, frozenset()).text(text, 10) == text


def test_reordering_keeps_every_sentence_and_the_first() -> None:
    rewrite = CopyRewrite(1, 3, {}, frozenset())
    body = " ".join(f"Sentence number {w} ends here." for w in "abcdefgh")
    out = rewrite.reorder(f"<p>{body}</p>")[3:-4]
    assert out != body and out.startswith("Sentence number a ")
    assert sorted(re.split(r"(?<=\.) ", out)) == sorted(re.split(r"(?<=\.) ", body))


def test_a_world_the_disk_cannot_hold_is_refused_before_writing(
    tmp_path: Path, params: Params, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = World(SNAPSHOT, params, 0)
    small = shutil.disk_usage(tmp_path)._replace(free=world.estimate_bytes(2))
    monkeypatch.setattr(world_module.shutil, "disk_usage", lambda path: small)
    with pytest.raises(WorldTooLargeError, match=r"3-fold world needs about [\d.]+ GB.*GB free"):
        grow(SNAPSHOT, tmp_path / "big", 3, params)
    assert not list(tmp_path.iterdir())
    with pytest.raises(BenchsmithError, match="--factor must be between 1 and"):
        grow(SNAPSHOT, tmp_path / "none", 0, params)

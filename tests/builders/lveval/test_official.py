"""LV-Eval's own layout: file names, line fields and types as their scripts read them, one
folder per variant, and a reader that follows their documented layout finds every record."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builders.lveval.official import AK_NAMES, official_name, write_official
from builders.lveval.records import RECORD_SCHEMA, VARIANTS


def record(qa_id: str, level: str, variant: str, language: str = "en") -> dict:
    """A records row with the columns the layout reads (the others left null)."""
    return {
        "qa_id": qa_id,
        "dataset": "events_mixup",
        "language": language,
        "level": level,
        "variant": variant,
        "input": f"Who wrote {qa_id}?",
        "context": f"Passages for {qa_id} at {level} ({variant}).",
        "answers": [f"Author of {qa_id}", "someone"],
        "answer_keywords": "Author",
        "length": 12,
        "confusing_facts": ["A false fact."] if "cfi" in variant else [],
    }


def write_records(folder: Path, levels: tuple[str, ...] = ("2k", "16k"), **kw: str) -> list[dict]:
    """Tiny records files, one per level, each row in four variants."""
    folder.mkdir(parents=True)
    rows = []
    for level in levels:
        mine = [record(f"q{i}", level, v, **kw) for i in range(3) for v in VARIANTS]
        table = pa.Table.from_pylist(mine, schema=RECORD_SCHEMA)
        pq.write_table(table, folder / f"events_mixup_{level}.parquet", row_group_size=2)
        rows += mine
    return rows


def their_reader(folder: Path) -> dict[tuple[str, str], list[dict]]:
    """Lines by (set name, level), found the way LV-Eval's scripts find them: ``*.jsonl`` in the
    folder, the name cut at the first ``_.{1,3}k``, the level after the last ``_``."""
    found: dict[tuple[str, str], list[dict]] = {}
    for path in sorted(folder.glob("*_*.jsonl")):
        dataset = path.name.split(".")[0]
        key = (re.split("_.{1,3}k", dataset)[0], dataset.split("_")[-1])
        found[key] = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    return found


def test_one_folder_per_variant_with_their_file_names_fields_and_types(tmp_path: Path) -> None:
    rows = write_records(tmp_path / "records")
    counts = write_official(tmp_path / "records", tmp_path / "official", batch_rows=2)
    out = tmp_path / "official"
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted(VARIANTS)
    assert (out / "README.md").is_file()
    for variant in VARIANTS:
        names = sorted(p.name for p in (out / variant).iterdir())
        assert names == ["multifieldqa_en_mixup_16k.jsonl", "multifieldqa_en_mixup_2k.jsonl"]
        for level, lines in ((k[1], v) for k, v in their_reader(out / variant).items()):
            mine = [r for r in rows if r["variant"] == variant and r["level"] == level]
            assert counts[f"{variant}/multifieldqa_en_mixup_{level}.jsonl"] == len(lines)
            assert [line["context"] for line in lines] == [r["context"] for r in mine]
            for line in lines:
                assert set(line) == {
                    "input", "context", "answers", "length", "dataset", "language",
                    "answer_keywords", "confusing_facts",
                }  # fmt: skip
                # what prediction.py formats the prompt with and copies to its predictions
                assert isinstance(line["input"], str) and isinstance(line["context"], str)
                assert isinstance(line["answers"], list) and all(
                    isinstance(a, str) for a in line["answers"]
                )
                assert isinstance(line["length"], int)
                assert isinstance(line["answer_keywords"], str)  # their gold_ans
                assert isinstance(line["confusing_facts"], list)
                assert line["dataset"] == "multifieldqa_en_mixup" and line["language"] == "en"


def test_a_reader_following_their_layout_finds_every_record(tmp_path: Path) -> None:
    rows = write_records(tmp_path / "records", ("2k", "16k", "256k"))
    write_official(tmp_path / "records", tmp_path / "official", "loogle_SD_mixup")
    found = set()
    for variant in VARIANTS:
        for (name, level), lines in their_reader(tmp_path / "official" / variant).items():
            assert name in AK_NAMES and name == "loogle_SD_mixup"
            found |= {(line["context"], level, variant) for line in lines}
    assert found == {(r["context"], r["level"], r["variant"]) for r in rows}
    assert len(found) == len(rows)


def test_chinese_records_take_the_chinese_ak_set(tmp_path: Path) -> None:
    write_records(tmp_path / "records", ("16k",), language="zh")
    write_official(tmp_path / "records", tmp_path / "official")
    assert (tmp_path / "official" / "kpr" / "multifieldqa_zh_mixup_16k.jsonl").is_file()


def test_names_and_levels_their_code_cannot_use_are_refused(tmp_path: Path) -> None:
    assert official_name("en") == "multifieldqa_en_mixup"
    assert official_name("zh", "cmrc_mixup") == "cmrc_mixup"
    with pytest.raises(ValueError, match="not an AK-scored"):
        official_name("en", "events_mixup")
    with pytest.raises(ValueError, match="scored as 'zh'"):
        official_name("en", "cmrc_mixup")
    write_records(tmp_path / "records", ("1024k",))
    with pytest.raises(ValueError, match="cannot read"):
        write_official(tmp_path / "records", tmp_path / "official")

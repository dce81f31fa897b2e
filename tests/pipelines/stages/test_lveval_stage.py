"""The lveval stage on the snapshot: every item at every level in four variants, exact positions,
L-Eval export, reviewed rules, a local Hugging Face dataset; then its baselines."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builders.drops import DROP_SCHEMA
from builders.lveval.contexts import level_words
from builders.lveval.records import QA_SCHEMA, RECORD_SCHEMA, VARIANTS
from builders.lveval.settings import HubSource, KPRSettings
from pipelines.dag.invoke import Workspace, run_stage
from pipelines.errors import MissingInputError, ParamsError
from pipelines.settings import Params
from pipelines.stages.lveval import run_lveval
from pipelines.stages.lveval_baselines import run_lveval_baselines
from pipelines.synthesis.lveval_rules import read_rules
from tests.support.snapshot import ROOT


@pytest.fixture(scope="module")
def entries(snapshot_entries: Path) -> Path:
    return snapshot_entries


def build(params: Params, entries: Path, out: Path, root: Path | None = None, **lveval: object):
    llm = params.llm.model_copy(update={"cache": out.parent / "llm.sqlite"})
    settings = params.lveval.model_copy(update=lveval)
    return run_lveval(settings, entries=entries, out=out, llm=llm, root=root or Path("."))


def baselines(params: Params, settings, records: Path, out: Path, llm=None, embed_cache=None):
    """The lveval_baselines stage with ``settings`` and the snapshot's retrieval settings."""
    return run_lveval_baselines(
        settings,
        records=records,
        out=out,
        llm=llm or params.llm,
        retrieval=params.resolved_retrieval(),
        embed_cache=embed_cache,
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, params: Params, entries: Path) -> Path:
    out = tmp_path_factory.mktemp("lveval") / "lveval"
    build(params, entries, out)
    return out


def _records(out: Path) -> list[dict]:
    return [
        r for f in sorted((out / "records").glob("*.parquet")) for r in pq.read_table(f).to_pylist()
    ]


def test_every_item_is_built_at_every_level_in_four_variants(built: Path, params: Params) -> None:
    s = params.lveval
    qa = pq.read_table(built / "qa.parquet")
    assert qa.schema.equals(QA_SCHEMA, check_metadata=False)
    items = {r["qa_id"]: r for r in qa.to_pylist()}
    assert len(items) >= 10 and {r["hops"] for r in items.values()} == {1, 2}
    files = sorted(p.name for p in (built / "records").glob("*.parquet"))
    assert files == sorted(f"{s.events.dataset}_{level}.parquet" for level in s.levels)
    grid = defaultdict(set)
    for path in (built / "records").glob("*.parquet"):
        table = pq.read_table(path)
        assert table.schema.equals(RECORD_SCHEMA, check_metadata=False)
        for row in table.to_pylist():
            grid[row["qa_id"]].add((row["level"], row["variant"]))
            words = level_words(row["level"])
            assert words * (1 - s.tolerance) <= row["length"] <= words
            assert row["input"] == items[row["qa_id"]]["question"] or "kpr" in row["variant"]
    expected = {(level, v) for level in s.levels for v in VARIANTS}
    assert set(grid) == set(items) and all(cells == expected for cells in grid.values())
    stats = json.loads((built / "stats.json").read_text())
    assert stats["counts"]["qa_items"] == len(items)
    assert set(stats["levels"]) == set(s.levels) and stats["llm"]["failed"] >= 0
    assert pq.read_table(built / "drops.parquet").schema.equals(DROP_SCHEMA, check_metadata=False)
    assert not [p for p in built.iterdir() if p.name.startswith(".tmp")]


def test_positions_facts_and_replacements_hold_in_the_built_records(built: Path) -> None:
    for row in _records(built):
        context = row["context"]
        for pos in row["evidence_positions"] + row["confusing_fact_positions"]:
            assert context[pos["start"] : pos["end"]] == pos["text"]
        evidence = " ".join(p["text"] for p in row["evidence_positions"]).lower()
        assert any(a.lower() in evidence for a in row["answers"])
        for fact in row["confusing_facts"]:
            assert not any(a.lower() in fact.lower().split() for a in row["answers"])
        everything = " ".join([context, row["input"], *row["answers"], *row["confusing_facts"]])
        for rule in row["replacement_rules"]:
            assert rule["orig"].lower() not in everything.lower().split()


def test_the_leval_export_and_the_rules_file_are_usable(built: Path, params: Params) -> None:
    records = {(r["qa_id"], r["level"], r["variant"]): r for r in _records(built)}
    lines = [
        json.loads(line)
        for f in sorted((built / "leval").glob("*.jsonl"))
        for line in f.read_text().splitlines()
    ]
    assert len(lines) == len(records)
    for line in lines:
        assert set(line) == {"input", "instructions", "outputs", "source", "evaluation"}
        assert len(line["instructions"]) == len(line["outputs"]) == 1
    rules = read_rules(built / "rules.jsonl")
    qa_ids = {r["qa_id"] for r in records.values()}
    assert rules and {r.scope for r in rules} <= qa_ids | {
        d["item_id"] for d in pq.read_table(built / "drops.parquet").to_pylist()
    }


def test_a_reviewed_rules_file_vetoes_and_overrides_proposals(
    tmp_path: Path, params: Params, entries: Path, built: Path
) -> None:
    proposed = read_rules(built / "rules.jsonl")
    imre = [r for r in proposed if r.orig == "Imre"]
    assert imre, "the snapshot's cyclone questions propose a rule for Imre"
    review = tmp_path / "review.jsonl"
    review.write_text(
        json.dumps({"orig": "Imre", "repl": "Ostwynder", "scope": "*"}) + "\n"
        + json.dumps({"orig": "Caro", "repl": None, "scope": "events_mixup"}) + "\n"
    )  # fmt: skip
    out = tmp_path / "lveval"
    build(params, entries, out, root=tmp_path, kpr=KPRSettings(max_rules=2, rules_file=review))
    kpr_rows = [r for r in _records(out) if r["variant"] == "kpr"]
    applied = {(x["orig"], x["repl"]) for r in kpr_rows for x in r["replacement_rules"]}
    assert ("Imre", "Ostwynder") in applied
    assert not any(orig == "Caro" for orig, _ in applied)
    assert any("Ostwynder" in r["input"] for r in kpr_rows)


def test_a_local_hugging_face_dataset_becomes_a_subset_with_mapped_columns(
    tmp_path: Path, params: Params, entries: Path
) -> None:
    folder = tmp_path / "qa_set"
    folder.mkdir()
    rows = {
        "q": [
            "Who chaired the Ostrel inquiry?",
            "How many cars did the ferry carry?",
            "Unanswerable?",
        ],
        "ans": [["Ilse Marten"], ["80", "80 cars", "eighty"], ["nothing"]],
        "ctx": [
            "The Ostrel inquiry met in May. It was chaired by Ilse Marten of Korvenna.",
            "The ferry was painted deep blue. It carried 80 cars on its last crossing.",
            "This context does not hold the answer.",
        ],
    }
    pq.write_table(pa.table(rows), folder / "test.parquet")
    source = HubSource(
        path=str(folder), dataset="local_mixup", question="q", answers="ans", context="ctx"
    )
    out = tmp_path / "lveval"
    stats = build(params, entries, out, hub_sources=[source])
    local = [r for r in _records(out) if r["dataset"] == "local_mixup"]
    questions = {r["input"] for r in local if r["variant"] == "clean"}
    assert questions == {"Who chaired the Ostrel inquiry?", "How many cars did the ferry carry?"}
    ferry = next(r for r in local if r["input"] == "How many cars did the ferry carry?")
    assert ferry["answers"] == ["80", "80 cars"]  # "eighty" is not in the evidence
    assert stats.dropped["qa_check_answer_not_in_evidence"] >= 1
    bad = source.model_copy(update={"question": "question_text"})
    with pytest.raises(
        ParamsError, match=r"hub_sources -> 0\]\.question: no column 'question_text'"
    ):
        build(params, entries, tmp_path / "bad", hub_sources=[bad])


def test_baselines_report_recall_and_ak_by_level_and_variant(
    tmp_path: Path, params: Params, built: Path
) -> None:
    settings = params.lveval_baselines.model_copy(update={"retrievers": ["random", "bm25"]})
    llm = params.llm.model_copy(update={"cache": tmp_path / "llm.sqlite"})
    out = tmp_path / "baselines"
    stats = baselines(params, settings, built / "records", out, llm=llm)
    records = _records(built)
    assert stats.counts["records"] == stats.counts["answers_ok"] == len(records)
    metrics = json.loads((out / "lveval.json").read_text())
    levels = params.lveval.levels
    for name in ("random", "bm25"):
        assert set(metrics["evidence_recall"][name]) == set(levels)
        assert all(set(v) == set(VARIANTS) for v in metrics["evidence_recall"][name].values())
    mean = {
        n: sum(v["clean"] for v in metrics["evidence_recall"][n].values())
        for n in ("random", "bm25")
    }
    assert mean["bm25"] > mean["random"]
    assert set(metrics["ak"]) == set(levels) and set(metrics["output_words"]) == set(levels)
    assert 0 < metrics["ak_mean"] <= 100
    answers = pq.read_table(out / "answers.parquet").to_pylist()
    assert all(a["output_words"] == len(a["prediction"].split()) for a in answers)
    plot = (out / "ak_by_level.csv").read_text().splitlines()
    assert plot[0] == "level_words,clean,cfi,kpr,cfi_kpr" and len(plot) == 1 + len(levels)
    from pipelines.stages.lveval_baselines import summary

    assert stats.headline == {"ak_mean": metrics["ak_mean"]}
    assert summary(stats, tmp_path / "absent") == (
        f"lveval baselines: {len(records)} records; mean AK {metrics['ak_mean']} -> "
        f"{tmp_path / 'absent'}/"
    )
    with pytest.raises(
        MissingInputError, match="the lveval stage writes it: run 'dvc repro lveval"
    ):
        run_stage("lveval_baselines", params, Workspace(ROOT, ROOT / "params.yaml", tmp_path))


def test_dense_vectors_are_kept_in_the_embedding_cache_for_reruns(
    tmp_path: Path, params: Params, built: Path
) -> None:
    from pipelines.embed.cache import EmbeddingCache

    records = tmp_path / "records"
    records.mkdir()
    first = sorted((built / "records").glob("*.parquet"))[0]
    pq.write_table(pq.read_table(first).slice(0, 8), records / first.name)
    settings = params.lveval_baselines.model_copy(update={"retrievers": ["dense"], "answer": False})
    cache = tmp_path / "vectors.sqlite"

    def run(out: str) -> dict:
        baselines(params, settings, records, tmp_path / out, embed_cache=cache)
        return json.loads((tmp_path / out / "stats.json").read_text())

    stats = run("a")
    stored = len(EmbeddingCache(cache))
    assert stats["dense_prefill"]["embedded"] == stored > 0
    assert stats["dense_chunks"]["embedded"] == 0  # ranking found every vector in the cache
    again = run("b")
    assert again["dense_prefill"]["embedded"] == 0 and len(EmbeddingCache(cache)) == stored
    assert again["dense_prefill"]["from_cache"] == stored
    a = json.loads((tmp_path / "a" / "lveval.json").read_text())
    assert a == json.loads((tmp_path / "b" / "lveval.json").read_text())
    assert a["evidence_recall"]["dense"]


def test_ak_thresholds_are_settings(tmp_path: Path, params: Params, built: Path) -> None:
    records = tmp_path / "records"
    records.mkdir()
    first = sorted((built / "records").glob("*.parquet"))[0]
    pq.write_table(pq.read_table(first).slice(0, 24), records / first.name)
    llm = params.llm.model_copy(update={"cache": tmp_path / "llm.sqlite"})

    def gates(**thresholds: float) -> list[bool | None]:
        settings = params.lveval_baselines.model_copy(update={"retrievers": []})
        if thresholds:
            ak = settings.ak_thresholds.model_copy(update=thresholds)
            settings = settings.model_copy(update={"ak_thresholds": ak})
        out = tmp_path / f"out{len(thresholds)}"
        baselines(params, settings, records, out, llm=llm)
        return [a["gate_passed"] for a in pq.read_table(out / "answers.parquet").to_pylist()]

    assert False in gates()  # LV-Eval's 0.2 gates some of the template answers out
    assert set(gates(en=0.0)) == {True}


def test_the_stage_reads_the_reviewed_rules_and_names_the_setting_file_and_line(
    tmp_path: Path, params: Params
) -> None:
    from pipelines.synthesis.lveval_rules import reviewed_rules

    review = tmp_path / "review.jsonl"
    review.write_text('{"orig": "Imre", "repl": "Dalven"}\n\n{"orig": "Caro", "repl": 3}\n')
    settings = params.lveval.model_copy(update={"kpr": KPRSettings(rules_file=review)})
    with pytest.raises(
        ParamsError, match=r"\[lveval -> kpr -> rules_file\] .*review\.jsonl:3: 'repl'"
    ):
        reviewed_rules(settings, tmp_path)
    review.write_text('{"orig": "Imre", "repl": "Dalven", "scope": "qa-1"}\n')
    assert [(r.orig, r.repl, r.scope, r.origin) for r in reviewed_rules(settings, tmp_path)] == [
        ("Imre", "Dalven", "qa-1", "reviewed")
    ]
    assert reviewed_rules(params.lveval.model_copy(update={"kpr": KPRSettings()}), tmp_path) == []


def test_a_hub_source_revision_is_validated_and_passed_to_load_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets
    from pydantic import ValidationError

    from pipelines.sources.hub.qa_sets import hub_items

    folder = tmp_path / "qa_set"
    folder.mkdir()
    rows = {
        "question": ["Who chaired the Ostrel inquiry?"],
        "answers": [["Ilse Marten"]],
        "context": ["The Ostrel inquiry met in May. It was chaired by Ilse Marten of Korvenna."],
    }
    pq.write_table(pa.table(rows), folder / "test.parquet")
    source = HubSource(path=str(folder), dataset="local_mixup")
    assert source.revision is None
    seen: list[object] = []
    real = datasets.load_dataset

    def recording(*args: object, **kwargs: object):
        seen.append(kwargs.get("revision", "<not passed>"))
        return real(*args, **kwargs)

    monkeypatch.setattr(datasets, "load_dataset", recording)
    items, _, _ = hub_items(source, "[lveval -> hub_sources -> 0]")  # revision None still loads
    assert [i.question for i in items] == rows["question"] and seen == [None]

    pinned = HubSource(path=str(folder), dataset="local_mixup", revision="0123abc")
    monkeypatch.setattr(
        datasets, "load_dataset", lambda *a, **k: seen.append(k["revision"]) or 1 / 0
    )
    with pytest.raises(ParamsError, match="cannot load"):
        hub_items(pinned, "[lveval -> hub_sources -> 0]")
    assert seen[-1] == "0123abc"
    for bad in ("", 3):
        with pytest.raises(ValidationError) as info:
            HubSource(path=str(folder), dataset="local_mixup", revision=bad)
        assert info.value.errors()[0]["loc"] == ("revision",)


def test_the_official_layout_is_off_by_default_and_holds_every_record_when_on(
    tmp_path: Path, params: Params, entries: Path, built: Path
) -> None:
    assert not params.lveval.official_layout and not (built / "official").exists()
    out = tmp_path / "lveval"
    build(params, entries, out, official_layout=True, official_name="hotpotwikiqa_mixup")
    records = _records(out)
    lines = {
        (f.parent.name, f.stem): [json.loads(line) for line in f.read_text().splitlines()]
        for f in sorted((out / "official").glob("*/*.jsonl"))
    }
    assert {v for v, _ in lines} == set(VARIANTS) and (out / "official" / "README.md").is_file()
    for (variant, stem), mine in lines.items():
        level = stem.removeprefix("hotpotwikiqa_mixup_")
        rows = [r for r in records if r["variant"] == variant and r["level"] == level]
        assert [m["context"] for m in mine] == [r["context"] for r in rows]
    assert sum(map(len, lines.values())) == len(records)
    build(params, entries, out)
    assert not (out / "official").exists()


def test_the_cli_writes_the_official_layout_from_records(tmp_path: Path, built: Path) -> None:
    from typer.testing import CliRunner

    from pipelines.cli import app

    out = tmp_path / "official"
    args = ["lveval-official", "--records", str(built / "records"), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (out / "clean").iterdir())[0].startswith("multifieldqa_en_mixup_")
    bad = CliRunner().invoke(app, [*args, "--name", "cmrc_mixup"])
    assert bad.exit_code != 0 and "cmrc_mixup" in bad.output


def _with_empty_event(entries: Path, path: Path, keep: bool = True) -> Path:
    """``entries`` (all of them, or none with ``keep`` off) and an event with no text at all."""
    table = pq.read_table(entries)
    rows = table.to_pylist()
    empty = rows[0] | {
        "event_id": "x:empty", "title": "Empty floods", "summary": "", "sections": [],
        "outline": [], "documents": [], "infobox": [], "references": [], "word_count": 0,
    }  # fmt: skip
    pq.write_table(pa.Table.from_pylist([*rows, empty] if keep else [empty], table.schema), path)
    return path


def test_an_event_without_text_is_dropped_and_the_others_are_built_as_before(
    tmp_path: Path, params: Params, entries: Path, built: Path
) -> None:
    out = tmp_path / "lveval"
    stats = build(params, _with_empty_event(entries, tmp_path / "entries.parquet"), out)
    assert pq.read_table(out / "qa.parquet").equals(pq.read_table(built / "qa.parquet"))
    assert _records(out) == _records(built)
    empty, *drops = pq.read_table(out / "drops.parquet").to_pylist()
    assert drops == pq.read_table(built / "drops.parquet").to_pylist()
    assert (empty["item_id"], empty["kind"], empty["step"], empty["reason"]) == (
        "x:empty",
        "event",
        "questions",
        "no_passages",
    )
    assert stats.dropped["questions_no_passages"] == 1
    # not asked: the model saw as many question prompts as there are real events
    asked = json.loads((out / "stats.json").read_text())["llm"]["by_prompt"]["lveval/questions"]
    assert asked["asks"] == pq.read_table(entries).num_rows


def test_baselines_say_lveval_ran_and_kept_nothing_when_it_built_no_record(
    tmp_path: Path, params: Params, entries: Path
) -> None:
    data = tmp_path / "data"
    only = _with_empty_event(entries, tmp_path / "entries.parquet", keep=False)
    stats = build(params, only, data / "lveval")
    assert stats.counts["qa_items"] == 0 and not list((data / "lveval" / "records").iterdir())
    with pytest.raises(MissingInputError) as raised:
        run_stage("lveval_baselines", params, Workspace(ROOT, ROOT / "params.yaml", data))
    message = str(raised.value)
    assert "dvc repro" not in message
    assert "the lveval stage ran but produced none (0 QA items kept; questions_no_passages 1)" in (
        message
    )
    assert f"{data / 'lveval' / 'drops.parquet'} gives every item left out" in message


def test_a_record_with_an_empty_context_fails_unasked_and_the_others_score_as_before(
    tmp_path: Path, params: Params, built: Path
) -> None:
    first = sorted((built / "records").glob("*.parquet"))[0]
    table = pq.read_table(first).slice(0, 4)
    rows = table.to_pylist()
    empty = rows[0] | {"qa_id": "x-empty", "context": "", "evidence_positions": [],
                       "confusing_fact_positions": []}  # fmt: skip
    settings = params.lveval_baselines.model_copy(update={"retrievers": ["random", "bm25"]})
    llm = params.llm.model_copy(update={"cache": tmp_path / "llm.sqlite"})
    stats = {}
    for name, kept in (("good", rows), ("beside", [*rows[:2], empty, *rows[2:]])):
        (tmp_path / name).mkdir()
        pq.write_table(
            pa.Table.from_pylist(kept, schema=table.schema), tmp_path / name / first.name
        )
        stats[name] = baselines(params, settings, tmp_path / name, tmp_path / f"{name}-out", llm)

    def table_of(name: str, kind: str) -> list[dict]:
        return pq.read_table(tmp_path / f"{name}-out" / f"{kind}.parquet").to_pylist()

    for kind in ("retrieval", "answers"):
        beside = table_of("beside", kind)
        assert [r for r in beside if r["qa_id"] != "x-empty"] == table_of("good", kind)
    (answer,) = [r for r in table_of("beside", "answers") if r["qa_id"] == "x-empty"]
    assert (answer["status"], answer["score"]) == ("failed", None)
    assert answer["reason"].startswith("empty_context:")
    nothing = [r for r in table_of("beside", "retrieval") if r["qa_id"] == "x-empty"]
    assert [(r["found"], r["evidence"]) for r in nothing] == [(0, 0), (0, 0)]
    good, beside = (json.loads((tmp_path / f"{n}-out" / "lveval.json").read_text())
                    for n in ("good", "beside"))  # fmt: skip
    assert beside["evidence_recall"] == good["evidence_recall"]  # no evidence, no recall
    assert beside["ak_mean"] == good["ak_mean"]
    s = stats["beside"]
    assert s.counts["records_empty_context"] == 1 and s.dropped == {"answer_empty_context": 1}
    llm_stats = json.loads((tmp_path / "beside-out" / "stats.json").read_text())["llm"]
    assert llm_stats["asks"] == len(rows)
    from pipelines.stages.lveval_baselines import summary

    assert "5 records (1 with an empty context, not scored);" in summary(s, tmp_path)

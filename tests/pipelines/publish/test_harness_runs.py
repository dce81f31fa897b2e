"""The export's own harness tasks, run by the real harnesses on SmolLM2, scored as we score.

lm-evaluation-harness and Inspect AI each sit in a venv of their own (without benchsmith) and
run every generated task of the snapshot export, two items each, against SmolLM2-135M behind
the OpenAI-compatible test server. Their per-item scores must equal what benchsmith's scorer
gives the same completions on the published rows.

Both run the LV-Eval and WikiGenBench tasks with a 4,096-token window in cl100k_base: each task
must skip exactly the rows whose published count (the ``tokens`` column) is over it, say so, and report its scores per length
bin with their AUC, as :mod:`benchsmith_scoring.lengths` computes them.

The server cuts prompts to 256 tokens in the middle (LV-Eval's truncation; SmolLM2 reads
8192 and a 2-core machine would take minutes over the 8k level; reading 256 tokens takes it
about a second) and answers a repeated greedy
request from memory, so Inspect's requests, the same as lm-eval's, cost nothing twice.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from benchsmith_scoring import wikigen_judges as judges
from benchsmith_scoring.harness import wikigen_rr_messages
from benchsmith_scoring.lengths import auc, bin_name, bin_of, mean_by_bin
from benchsmith_scoring.leval.metrics import rouge
from benchsmith_scoring.lveval import ak_score
from benchsmith_scoring.summhay import Verdict, parse_summary, score_insights, summarize_scores
from benchsmith_scoring.wikigen_rr import METRICS
from builders.summhay.answers import JudgeAnswer
from builders.wikigen.generation import article_claims, citation_scores
from pipelines.evaluation.wikigen import EntailsAnswer
from pipelines.evaluation.wikigen_judges import ANSWERS, RubricGrade, scores_of
from pipelines.llm.structured import AnswerError, parse_answer
from tests.support.smollm import SmolLMServer
from tests.support.snapshot import ROOT
from tests.support.venvs import INSPECT_AI, LM_EVAL, venv_with

DATASETS = ("lveval", "wikigenbench")
LIMIT = 2
MAX_TOKENS = 32
"""Completion cap for every task here (WikiGenBench's own 1024 would take minutes)."""
OFFLINE = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
JUDGED = {"lveval": [], "wikigenbench": ["rr_contexts"]}
RR_JUDGE_TOKENS = 48
"""The Inspect tasks that judge with a grader (no lm-eval task), per dataset."""
WINDOW = 4096
TOKENIZER = "cl100k_base"
"""The window both harnesses are given: the snapshot's 2k level fits it, its 4k and 8k do not."""


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmolLMServer]:
    options = ("--max-prompt-tokens", "256", "--replay")
    with SmolLMServer(
        tmp_path_factory.mktemp("harness-model"), ROOT / ".cache", options=options
    ) as s:
        yield s


def generated_tasks(export: Path, dataset: str) -> list[str]:
    """The task names of a dataset's lm_eval/ folder (groups are the ``_*.yaml`` files)."""
    folder = export / dataset / "lm_eval"
    return sorted(p.stem for p in folder.glob("*.yaml") if not p.name.startswith("_"))


def published_rows(export: Path, dataset: str, config: str) -> list[dict[str, Any]]:
    """A config's test rows, read straight from its Parquet shards."""
    files = sorted((export / dataset / config).glob("test-*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def request_tokens(row: dict[str, Any]) -> int:
    """The row's request in :data:`TOKENIZER`, as the export publishes it (the prompt as a
    chat, plus the answer; ``test_tokens_column.py`` checks the counts)."""
    return int(row["tokens"][TOKENIZER])


def fitting(dataset: str, rows: list[dict[str, Any]]) -> list[int]:
    """The published rows whose request fits :data:`WINDOW`, in order."""
    return [i for i, row in enumerate(rows) if request_tokens(row) <= WINDOW]


def check_report(report: dict[str, Any], dataset: str, rows: list[dict[str, Any]]) -> None:
    """A harness's length report of a config says what the published counts say."""
    kept = fitting(dataset, rows)
    assert report["skipped_rows"] == [i for i in range(len(rows)) if i not in kept]
    assert (report["rows"], report["kept"]) == (len(rows), len(kept))
    assert (report["max_length"], report["tokenizer"]) == (WINDOW, TOKENIZER)
    assert report["counted"] == 0  # the published counts serve; nothing counted again


def check_bins(reported: dict[str, float], scored: list[tuple[dict[str, float], int]]) -> None:
    """Per-bin means and the AUC reported (``<metric>_<bin>``, ``<metric>_auc``) are those of
    the scored rows: ``(scores, request tokens)``."""
    for metric in scored[0][0]:
        items = [(scores[metric], bin_of(n)) for scores, n in scored]
        for upper, mean in mean_by_bin(items).items():
            assert reported[f"{metric}_{bin_name(upper)}"] == pytest.approx(mean, abs=1e-9)
        assert reported[f"{metric}_auc"] == pytest.approx(auc(items), abs=1e-9)


def our_scores(dataset: str, row: dict[str, Any], completion: str) -> dict[str, float]:
    """benchsmith's scores of one completion on one published row."""
    if dataset == "wikigenbench":
        return {"rouge_l": rouge(completion, row["article"], stem=True).rougeL}
    return {
        metric: ak_score(
            completion, row["answers"], row["answer_keywords"], language=row["language"], mode=mode
        ).score
        for metric, mode in (("ak", "readme"), ("ak_code", "reference_code"))
    }


def requests_answered(server: SmolLMServer) -> int:
    """Completions the model has generated (not replayed) so far."""
    return len(re.findall(r"prompt \+ \d+ completion tokens", server.log_path.read_text("utf-8")))


def run_lm_eval(
    export: Path, datasets: Sequence[str], work: Path, server: SmolLMServer, run: str = "first"
) -> Path:
    """Run lm-eval on the datasets' groups in one process; return its output folder. One
    dataset is included by its ``lm_eval/`` folder; several by the export's root, which lm-eval
    searches for task files (lm-eval indexes its own thousands of tasks at every start)."""
    bin_dir = venv_with("lm-eval", LM_EVAL)
    out = work / f"lm-eval-{run}"
    metadata = {"max_length": WINDOW, "tokenizer": TOKENIZER}
    metadata["lengths_report"] = str(work / f"lengths-{run}.jsonl")
    include = export / datasets[0] / "lm_eval" if len(datasets) == 1 else export
    args = (
        f"model={server.model},base_url={server.base_url}/chat/completions,num_concurrent=1,"
        "max_retries=1,tokenized_requests=False"
    )
    command = [
        str(bin_dir / "lm_eval"), "run", "--include_path", str(include),
        "--tasks", ",".join(datasets), "--model", "local-chat-completions", "--model_args", args,
        "--apply_chat_template", "--limit", str(LIMIT), "--gen_kwargs",
        f"max_gen_toks={MAX_TOKENS}", "--output_path", str(out), "--log_samples",
        "--use_cache", str(work / "lm-eval-cache"), "--cache_requests", "true",
        "--metadata", json.dumps(metadata),
    ]  # fmt: skip
    env = {**os.environ, **OFFLINE, "HF_HOME": str(work / "hf"), "OPENAI_API_KEY": "unused"}
    # lm-eval keeps built requests in its own package folder, keyed by task name only
    env["LM_HARNESS_CACHE_PATH"] = str(work / "lm-eval-requests")
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    (work / f"lm-eval-{run}.log").write_text(done.stderr, "utf-8")
    return out


@pytest.fixture(scope="module")
def lm_eval_runs(
    hub_export: Path, model: SmolLMServer, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """Each dataset's lm-eval output folder: one run for both, as a user evaluating several
    exports at once runs it (each task must read its own export, not the first one imported)."""
    work = tmp_path_factory.mktemp("lm-eval")
    out = run_lm_eval(hub_export, DATASETS, work, model)
    return dict.fromkeys(DATASETS, out)


def lm_eval_samples(out: Path, task: str) -> list[dict[str, Any]]:
    files = list(out.rglob(f"samples_{task}_[0-9]*.jsonl"))
    assert len(files) == 1, f"{task}: no samples file under {out}"
    return [json.loads(line) for line in files[0].read_text("utf-8").splitlines()]


@pytest.mark.parametrize("dataset", DATASETS)
def test_lm_eval_runs_every_generated_task_and_scores_as_benchsmith(
    dataset: str, hub_export: Path, lm_eval_runs: dict[str, Path]
) -> None:
    """Every task runs; over the window, exactly the rows the published counts put over it are
    skipped (reported, logged, out of every mean); the rest score as benchsmith scores them,
    per length bin too."""
    out = lm_eval_runs[dataset]
    tasks = generated_tasks(hub_export, dataset)
    assert tasks, f"{dataset}: no task YAMLs were generated"
    results = json.loads(next(out.rglob("results_*.json")).read_text("utf-8"))["results"]
    reports = {
        r["config"]: r
        for r in map(json.loads, (out.parent / "lengths-first.jsonl").read_text().splitlines())
    }
    log = (out.parent / "lm-eval-first.log").read_text("utf-8")
    skipped = 0
    for task in tasks:
        config = yaml.safe_load(
            re.sub(
                r"!function \S+",
                "fn",
                (hub_export / dataset / "lm_eval" / f"{task}.yaml").read_text(),
            )
        )["dataset_name"]
        rows = published_rows(hub_export, dataset, config)
        kept = fitting(dataset, rows)
        check_report(reports[config], dataset, rows)
        if len(kept) < len(rows):  # a warning; lm-eval shows no info lines
            line = f"benchsmith lengths: {config}: {len(kept)} of {len(rows)} rows scored"
            assert line in log, config
        skipped += len(rows) - len(kept)
        reported = {k.removesuffix(",none"): v for k, v in results[task].items()}
        assert reported["skipped"] == len(rows) - len(kept)
        samples = lm_eval_samples(out, task)
        if not kept:  # lm-eval needs a document: the first row stands in, never scored
            (stand_in,) = samples
            assert stand_in["doc"]["length_stand_in"] and stand_in["doc"]["context"] == ""
            assert not set(our_scores(dataset, rows[0], "")) & set(reported), task
            continue
        assert len(samples) == min(LIMIT, len(kept))
        scored = []
        for sample in samples:
            row = rows[kept[int(sample["doc_id"])]]
            assert (
                sample["doc"]["question" if dataset == "lveval" else "title"]
                == row["question" if dataset == "lveval" else "title"]
            )
            assert sample["doc"]["length_tokens"] == request_tokens(row)
            completion = sample["filtered_resps"][0]
            ours = our_scores(dataset, row, completion)
            assert {k: sample[k] for k in ours} == pytest.approx(ours, abs=1e-12), task
            scored.append((ours, request_tokens(row)))
        means = {k: sum(s[k] for s in samples) / len(samples) for k in ours}
        assert {k: reported[k] for k in ours} == pytest.approx(means, abs=1e-9)
        check_bins(reported, scored)
        counts = {k: v for k, v in reported.items() if re.fullmatch(r"count_gt_\w+_le_\w+", k)}
        counts = {k: v for k, v in counts.items() if not k.endswith("_stderr")}
        assert counts == {f"count_{bin_name(bin_of(n))}": len(scored) for _, n in scored}
    # the window is felt: LV-Eval's 4k and 8k levels are over it
    assert skipped if dataset == "lveval" else not skipped


def test_a_second_lm_eval_run_asks_the_model_nothing_and_converts_no_data(
    hub_export: Path, lm_eval_runs: dict[str, Path], model: SmolLMServer
) -> None:
    work = lm_eval_runs["lveval"].parent
    before = requests_answered(model)
    arrow = {p for p in (work / "hf").rglob("*.arrow")}
    again = run_lm_eval(hub_export, ["lveval"], work, model, run="second")
    assert requests_answered(model) == before
    assert {p for p in (work / "hf").rglob("*.arrow")} == arrow
    assert len(list((work / "lm-eval-requests").glob("requests-lveval_*"))) == 12
    first = lm_eval_samples(lm_eval_runs["lveval"], "lveval_events_mixup_2k_clean")
    second = lm_eval_samples(again, "lveval_events_mixup_2k_clean")
    assert [s["filtered_resps"] for s in second] == [s["filtered_resps"] for s in first]


def run_inspect(
    export: Path,
    tasks: dict[str, Sequence[str]],
    work: Path,
    server: SmolLMServer,
    options: Sequence[str] = (),
) -> dict[str, list[dict]]:
    """Run, in one Inspect process from the export's root, the ``tasks`` of each dataset's
    inspect/tasks.py (configs by dataset; an empty list: every one) with ``options`` (e.g.
    ``-T k=v``, given to every task); return the JSON logs by dataset. Inspect's start (about
    10 s) is paid once, and each task must read its own export, not the first one imported."""
    bin_dir = venv_with("inspect", INSPECT_AI)
    chosen = [
        spec
        for dataset, configs in tasks.items()
        for spec in [f"{dataset}/inspect/tasks.py@{c}" for c in configs]
        or [f"{dataset}/inspect/tasks.py"]
    ]
    command = [
        str(bin_dir / "inspect"), "eval", *chosen, "--model",
        f"openai-api/smollm/{server.model}", "--limit", str(LIMIT), "--max-tokens",
        str(MAX_TOKENS), "--max-connections", "1", "--log-dir", str(work / "logs"),
        "--log-format", "json", "--display", "plain", *options,
    ]  # fmt: skip
    env = {**os.environ, **OFFLINE, "HF_HOME": str(work / "hf")}
    env |= {"SMOLLM_BASE_URL": server.base_url, "SMOLLM_API_KEY": "unused"}
    done = subprocess.run(
        command, cwd=export, env=env, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    logs = [json.loads(p.read_text("utf-8")) for p in (work / "logs").glob("*.json")]
    assert all(log["status"] == "success" for log in logs), [log.get("error") for log in logs]
    by_dataset: dict[str, list[dict]] = {dataset: [] for dataset in tasks}
    for log in logs:  # <dataset>/inspect/tasks.py
        by_dataset[Path(log["eval"]["task_file"]).parent.parent.name].append(log)
    return by_dataset


WINDOWED = "max_length", "tokenizer"
"""The ``-T`` options of lm-eval's window, which the judged tasks are run without."""


@pytest.fixture(scope="module")
def inspect_windowed(
    hub_export: Path, model: SmolLMServer, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[dict]]:
    """Inspect's logs, by dataset, of the tasks lm-eval runs too, with lm-eval's window: one
    run for both datasets."""
    window = ("-T", f"max_length={WINDOW}", "-T", f"tokenizer={TOKENIZER}")
    tasks = {d: lm_eval_configs(hub_export, d) for d in DATASETS}
    work = tmp_path_factory.mktemp("inspect-windowed")
    return run_inspect(hub_export, tasks, work, model, window)


@pytest.fixture(scope="module")
def inspect_judged(
    hub_export: Path, model: SmolLMServer, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[dict]]:
    """Inspect's logs, by dataset, of the tasks that judge with a grader (every SummHay task
    and wikigenbench's rr_contexts), without a window, SmolLM2 as writer and grader: one run.
    Judges are capped at :data:`RR_JUDGE_TOKENS` (a Prometheus feedback of about 100
    characters): SmolLM2 on two CPU cores writes about 15 tokens a second. SummHay's task has
    no such option: Inspect leaves it out of that task's arguments, with a warning."""
    judge = ("-T", f"judge_tokens={RR_JUDGE_TOKENS}")
    tasks = {"summhay": [], "wikigenbench": JUDGED["wikigenbench"]}
    work = tmp_path_factory.mktemp("inspect-judged")
    return run_inspect(hub_export, tasks, work, model, judge)


def lm_eval_configs(export: Path, dataset: str) -> list[str]:
    """The configs of the dataset's lm-eval tasks."""
    return [re.sub(rf"^{dataset}_", "", t) for t in generated_tasks(export, dataset)]


def inspect_configs(export: Path, dataset: str) -> list[str]:
    """The configs the generated inspect/tasks.py declares a task for."""
    text = (export / dataset / "inspect" / "tasks.py").read_text("utf-8")
    return sorted(re.findall(r"return \w+\('([^']+)', REPO", text))


def completion_of(sample: dict[str, Any]) -> str:
    return sample["output"]["choices"][0]["message"]["content"]


@pytest.mark.parametrize("dataset", DATASETS)
def test_inspect_runs_every_generated_task_and_scores_as_benchsmith(
    dataset: str,
    hub_export: Path,
    lm_eval_runs: dict[str, Path],
    inspect_windowed: dict[str, list[dict]],
) -> None:
    """With the same window as lm-eval's run: rows over it are logged samples neither sent nor
    scored, the task's metadata reports them, and the rest score as benchsmith and lm-eval
    score them, per length bin too."""
    configs = lm_eval_configs(hub_export, dataset)
    # the judged tasks lm-eval cannot run are tested on their own
    assert sorted(set(inspect_configs(hub_export, dataset)) - set(configs)) == JUDGED[dataset]
    logs = inspect_windowed[dataset]
    for log in logs:
        assert {k: log["eval"]["task_args"].get(k) for k in WINDOWED} == {
            "max_length": WINDOW,
            "tokenizer": TOKENIZER,
        }
    by_config = {log["eval"]["dataset"]["name"]: log for log in logs}
    assert len(by_config) == len(logs)  # one log a config
    assert sorted(by_config) == sorted(configs)
    for config, log in by_config.items():
        rows = published_rows(hub_export, dataset, config)
        kept = fitting(dataset, rows)
        check_report(log["eval"]["metadata"]["lengths"], dataset, rows)
        lm_eval = {
            kept[int(s["doc_id"])]: s["filtered_resps"][0]
            for s in lm_eval_samples(lm_eval_runs[dataset], f"{dataset}_{config}")
        } if kept else {}  # fmt: skip
        assert len(log["samples"]) == LIMIT
        scored = []
        for sample in log["samples"]:
            index = int(sample["id"].rsplit("-", 1)[1])
            tokens_sent = request_tokens(rows[index])
            assert sample["metadata"]["length_tokens"] == tokens_sent
            if index not in kept:
                assert sample["metadata"]["length_skipped"] and not sample.get("scores")
                assert not sample["output"]["choices"], config  # never sent
                continue
            completion = completion_of(sample)
            ours = our_scores(dataset, rows[index], completion)
            (score,) = sample["scores"].values()
            value = (
                score["value"] if isinstance(score["value"], dict) else {"rouge_l": score["value"]}
            )
            assert value == pytest.approx(ours, abs=1e-12), config
            # same prompt, same greedy model: the two harnesses get the same completion
            assert completion == lm_eval[index], config
            scored.append((ours, tokens_sent))
        if not scored:
            assert all(e["scored_samples"] == 0 for e in log["results"]["scores"]), config
            continue
        reported = {}
        for entry in log["results"]["scores"]:
            metric = entry["name"] if dataset == "lveval" else "rouge_l"
            for key, found in entry["metrics"].items():
                name = key.removeprefix("bins_") if key.startswith("bins_") else key
                if name == "mean":
                    reported[metric] = found["value"]
                elif key.startswith("bins_") or dataset != "lveval":
                    reported[f"{metric}_{name}"] = found["value"]
        check_bins(reported, scored)


def test_inspect_judges_summhay_per_insight_and_pools_as_benchsmith(
    hub_export: Path, inspect_judged: dict[str, list[dict]]
) -> None:
    (log,) = inspect_judged["summhay"]
    assert not {k: v for k, v in log["eval"]["task_args"].items() if k in WINDOWED and v}
    assert inspect_configs(hub_export, "summhay") == ["subtopics"]
    rows = published_rows(hub_export, "summhay", "subtopics")
    everything = []
    for sample in log["samples"]:
        row = rows[int(sample["id"].rsplit("-", 1)[1])]
        meta = sample["scores"]["summhay_judge"]["metadata"]
        assert len(meta["judge_answers"]) == len(row["insights"])
        # the judge's own words, read by the toolkit's parser, give the verdicts scored
        verdicts = []
        for insight, answer in zip(row["insights"], meta["judge_answers"], strict=True):
            judged = JudgeAnswer.model_validate_json(answer).normalized()
            verdicts.append(Verdict(insight["insight_id"], *judged))
        assert [vars(v) for v in verdicts] == meta["verdicts"]
        gold = {i["insight_id"]: set(i["gold_document_ids"]) for i in row["insights"]}
        bullets = parse_summary(completion_of(sample))
        scores = score_insights(verdicts, bullets, gold, row["document_ids"], None, "paper")
        assert [vars(s) for s in scores] == meta["insights"]
        assert sample["scores"]["summhay_judge"]["value"] == (
            summarize_scores(scores)["joint"] or 0
        )
        everything += scores
    pooled = summarize_scores(everything)
    (reported,) = log["results"]["scores"]
    for key in ("coverage", "citation", "joint"):
        value = reported["metrics"][key]["value"]
        expected = pooled[key]
        assert (value != value and expected is None) or value == pytest.approx(expected), key


LM_EVAL_DOCS = """
import json, sys
from lm_eval.tasks import TaskManager, get_task_dict
manager = TaskManager(
    include_path=sys.argv[1], metadata={"cutoff": sys.argv[2]}, include_defaults=False
)
task = get_task_dict([sys.argv[3]], manager)[sys.argv[3]]
print(json.dumps([doc["event_id"] for doc in task.test_docs()]))
"""
INSPECT_SAMPLES = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("tasks", sys.argv[1])
tasks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tasks)
task = getattr(tasks, sys.argv[3])(cutoff=sys.argv[2])
print(json.dumps([sample.metadata["event_id"] for sample in task.dataset]))
"""


def test_both_harnesses_take_a_cutoff_and_keep_only_later_events(
    hub_export: Path, publish_data: Path, tmp_path: Path
):
    """lm-eval's ``--metadata`` and Inspect's ``-T`` reach the shipped loader, which keeps the
    entries created after the cutoff (read here from the stage outputs). lm-eval's task manager
    indexes the export's tasks only, not its own thousands (about 10 CPU-seconds): the runs
    above load the export's tasks beside them, as the ``lm_eval`` command does."""
    entries = pq.read_table(publish_data / "wikigen" / "entries.parquet").to_pylist()
    test = {e["event_id"] for e in entries if e["split"] == "test"}
    days = sorted(e["created_at"].date().isoformat() for e in entries if e["event_id"] in test)
    cutoff = days[len(days) // 2 - 1]  # the test split's middle day: some before, some after
    later = {e["event_id"] for e in entries if e["created_at"].date().isoformat() > cutoff}
    assert test & later and test - later
    export = hub_export / "wikigenbench"
    env = {**os.environ, **OFFLINE, "HF_HOME": str(tmp_path / "hf")}
    env["LM_HARNESS_CACHE_PATH"] = str(tmp_path / "lm-eval-requests")
    runs = (
        (venv_with("lm-eval", LM_EVAL), LM_EVAL_DOCS, export / "lm_eval", "wikigenbench_entries"),
        (venv_with("inspect", INSPECT_AI), INSPECT_SAMPLES, export / "inspect/tasks.py", "entries"),
    )
    for bin_dir, script, target, task in runs:
        done = subprocess.run(
            [str(bin_dir / "python"), "-c", script, str(target), cutoff, task],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        kept = json.loads(done.stdout.strip().splitlines()[-1])
        assert sorted(kept) == sorted(test & later), bin_dir


def toolkit_rr_scores(row: dict[str, Any], completion: str, meta: dict[str, Any]) -> dict:
    """The toolkit's scores of an RR article (``wikigen_baselines``' functions and answer
    models) given the grader's replies recorded in the Inspect log: None where a judge failed."""
    text = completion.strip()  # the toolkit keeps a reply stripped
    shown = [d["chunk_id"] for d in sorted(row["documents"], key=lambda d: d["n"])]
    found = article_claims(text, shown)
    assert meta["claims"] == [
        {"section": c.section, "text": c.text, "cited": list(c.cited)} for c in found
    ]
    judged_by = [j for j in judges.judges(judges.SCORES)]
    asked = ["entails" for c in found for d in c.cited if d]
    assert meta["requests"] == asked + judged_by
    replies = iter(meta["replies"])
    verdicts = []
    for _ in asked:
        try:
            verdicts.append(parse_answer(next(replies), EntailsAnswer).entails)
        except AnswerError:
            verdicts.append(None)
    assert meta["verdicts"] == verdicts
    it = iter(verdicts)
    supported = [[bool(next(it)) if d else False for d in c.cited] for c in found]
    cites = citation_scores(found, supported)
    failed = None in verdicts  # a citation without a verdict: the citation scores are left out
    scores = {
        "rouge_l": rouge(text, row["reference"], stem=True).rougeL,
        "citation_recall": None if failed else cites.recall,
        "citation_precision": None if failed else cites.precision,
        "citation_rate": None if failed else cites.rate,
    } | {judges.column(s): None for s in judges.SCORES}
    for judge in judged_by:
        try:
            answer = parse_answer(next(replies), ANSWERS.get(judge, RubricGrade))
        except AnswerError:
            continue
        scores |= {judges.column(k): v for k, v in scores_of(judge, answer).items()}
    return scores


def test_inspect_rr_task_writes_from_the_published_context_and_scores_as_the_toolkit(
    hub_export: Path, inspect_judged: dict[str, list[dict]]
) -> None:
    """``wikigenbench_rr``, SmolLM2 as writer and grader: each sample's prompt is the row's RR
    prompt, and every score and mean Inspect reports is the toolkit's on the same completion
    and the grader replies its log records (a failed judged score out of its mean)."""
    logs = inspect_judged["wikigenbench"]
    (log,) = [log for log in logs if log["eval"]["dataset"]["name"] == "rr_contexts"]
    assert log["eval"]["task_args"].get("judge_tokens") == RR_JUDGE_TOKENS
    rows = published_rows(hub_export, "wikigenbench", "rr_contexts")
    per_metric: dict[str, list[float]] = {m: [] for m in METRICS}
    judged = 0
    for sample in log["samples"]:
        row = rows[int(sample["id"].rsplit("-", 1)[1])]
        sent = [m["content"] for m in sample["input"] if m["role"] == "user"]
        assert sent == [m["content"] for m in wikigen_rr_messages(row) if m["role"] == "user"]
        score = sample["scores"]["wikigen_rr_judge"]
        ours = toolkit_rr_scores(row, completion_of(sample), score["metadata"])
        for name, value in ours.items():
            reported = score["value"][name]
            if value is None:  # a failed judge: NaN, left out of the mean
                assert reported != reported, name
                continue
            assert reported == pytest.approx(value, abs=1e-12), name
            per_metric[name].append(value)
        judged += len(score["metadata"]["replies"])
    assert judged >= 2 * len(judges.judges(judges.SCORES))  # the grader was asked
    # the grader's schema-bounded replies gave judged scores, not only failures
    assert any(per_metric[judges.column(s)] for s in judges.SCORES)
    assert per_metric["citation_recall"]
    # one mean per metric (Inspect reports a dict-valued score's keys as scores of their own)
    reported = {}
    for entry in log["results"]["scores"]:
        for key, found in entry["metrics"].items():
            reported[entry["name"] if key == "mean" else key] = found["value"]
    assert reported.keys() == set(METRICS)
    for name, values in per_metric.items():
        if values:
            assert reported[name] == pytest.approx(sum(values) / len(values), abs=1e-9), name
        else:
            assert reported[name] is None or reported[name] != reported[name], name

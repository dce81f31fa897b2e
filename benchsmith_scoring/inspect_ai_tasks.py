"""Inspect AI tasks scored by the shipped scorers, as the cards score their baselines.

``eval.yaml`` can name only Inspect's built-in scorers, which approximate LV-Eval's AK gate and
WikiGenBench's ROUGE-L; the tasks built here use the benchmark's own. Each export's
``inspect/tasks.py`` (generated) declares one task per config with these builders::

    inspect eval <export>/inspect/tasks.py@<config> --model <provider>/<model>

With a model's window and tokenizer (``-T max_length=4096 -T tokenizer=cl100k_base``), a row
over the window is kept as a sample that is neither sent nor scored (its metadata says why),
or cut to fit with ``-T overlength=truncate`` (:mod:`.lengths`); the task's metadata holds the
report, and each score comes per length bin with its AUC (:func:`bins`).

This module needs ``inspect-ai`` (and ``datasets`` to load the data); the toolkit never
imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ResponseSchema,
    get_model,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, mean, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema

from . import harness, lengths, prompts, wikigen_rr
from .lengths import LengthPolicy, Prompt, RowLength
from .summhay import (
    InsightScore,
    MetricMode,
    Verdict,
    parse_summary,
    parse_verdict,
    score_insights,
    summarize_scores,
)
from .wikigen import ENTAILS_SCHEMA

_LVEVAL_FIELDS = ("answers", "answer_keywords", "language", "qa_id")
_SUMMHAY_FIELDS = ("topic_id", "subtopic_id", "insights", "document_ids")
_RR_FIELDS = ("event_id", "title", "documents", "reference")
_ROLES: dict[str, type[ChatMessage]] = {
    "system": ChatMessageSystem,
    "user": ChatMessageUser,
    "assistant": ChatMessageAssistant,
}
JUDGE_TOKENS = 128
"""Completion cap of one coverage verdict (a short JSON object)."""
VERDICT = {
    "type": "object",
    "properties": {
        "coverage": {"type": "string", "enum": ["full", "partial", "none"]},
        "bullet_id": {"anyOf": [{"type": "integer"}, {"type": "string", "enum": ["NA"]}]},
    },
    "required": ["coverage", "bullet_id"],
    "additionalProperties": False,
}
"""The judge prompt's answer, asked as structured output where the grader's provider can."""
ENTAILS_TOKENS = 32
"""Completion cap of one entailment verdict (``{"entails": true}``)."""
RR_JUDGE_TOKENS = 512
"""Completion cap of one writing or informativeness judge (a Prometheus grade's feedback, then
its score)."""


def chat(messages: list[dict[str, str]]) -> list[ChatMessage]:
    """A shipped prompt's messages as Inspect chat messages."""
    return [_ROLES[m["role"]](content=m["content"]) for m in messages]


def _task(
    config: str,
    repo: str | None,
    revision: str | None,
    prompt: Prompt,
    target: str,
    keep: tuple[str, ...],
    score: Scorer,
    max_tokens: int,
    cutoff: str | None = None,
    export: str | Path | None = None,
    policy: LengthPolicy | None = None,
) -> Task:
    """A greedy task over one config's test split (rows created after ``cutoff`` when given),
    read from the export folder ``export`` when it holds it; ``keep`` are the columns the scorer
    reads. Under ``policy`` (:mod:`.lengths`), rows over the window are not sent."""
    policy = policy or LengthPolicy()
    rows = harness.load(config, revision=revision, repo=repo, cutoff=cutoff, export=export)
    rows = rows["test"]
    published = list(rows["tokens"]) if "tokens" in rows.column_names else [None] * len(rows)
    sizes, report = lengths.measure(published, rows.__getitem__, policy, prompt, target, config)
    if report.tokenizer is not None:
        report.log()
    samples = [
        _sample(f"{config}-{i}", row, size, prompt, target, keep)
        for i, (row, size) in enumerate(zip(rows, sizes, strict=True))
    ]
    return Task(
        dataset=MemoryDataset(samples, name=config),
        solver=generate_fitting(),
        scorer=score,
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
        name=config,
        metadata={"lengths": report.to_dict()} if report.tokenizer is not None else None,
    )


def _sample(
    sample_id: str, row: Mapping[str, Any], size: RowLength, prompt: Prompt, target: str,
    keep: tuple[str, ...],
) -> Sample:  # fmt: skip
    """One row as a sample: its prompt (over a cut context under ``truncate``), or, for a row
    over the window, a note in place of the prompt, which is never sent."""
    metadata = {k: (list(row[k]) if k == "answers" else row[k]) for k in keep}
    metadata |= {"length_tokens": size.tokens, "length_bin": size.upper}
    if not size.fits:
        metadata |= {"length_skipped": size.reason}
        note = f"[not sent: {size.reason}]"
        return Sample(id=sample_id, input=note, target=str(row[target]), metadata=metadata)
    if size.context is not None:
        row = {**row, "context": size.context}
    shown = prompt(row)
    text = shown if isinstance(shown, str) else chat([dict(m) for m in shown])
    return Sample(id=sample_id, input=text, target=str(row[target]), metadata=metadata)


@solver
def generate_fitting() -> Solver:
    """Inspect's ``generate()``, except that a row over the window is not sent."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.metadata.get("length_skipped"):
            state.completed = True
            return state
        return await generate(state)

    return solve


@metric
def bins() -> Metric:
    """The mean score per length bin (``gt_0_le_8k`` ...) and MRCR's AUC across them
    (``auc``, :func:`.lengths.auc`); nothing when the rows have no bin."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        items = [
            (s.score.as_float(), s.sample_metadata["length_bin"])
            for s in scores
            if (s.sample_metadata or {}).get("length_bin") is not None
        ]
        means = lengths.mean_by_bin(items)
        if not means:
            return {}
        return {lengths.bin_name(u): v for u, v in means.items()} | {"auc": lengths.auc(items)}

    return compute


def skipped(state: TaskState) -> bool:
    """Whether the sample's row was over the window (not sent, so not scored)."""
    return bool(state.metadata.get("length_skipped"))


@scorer(metrics={"ak": [mean(), bins()], "ak_code": [mean(), bins()]})
def ak() -> Scorer:
    """LV-Eval's AK, as described (``ak``) and as its code computes it (``ak_code``); no score
    for a row over the window."""

    async def score(state: TaskState, target: Target) -> Score | None:
        if skipped(state):
            return None
        completion = state.output.completion
        return Score(value=harness.lveval_scores(state.metadata, completion), answer=completion)

    return score


@scorer(metrics=[mean(), bins()])
def rouge_l() -> Scorer:
    """WikiGenBench's ROUGE-L (stemmed) against the reference article; no score for a row over
    the window."""

    async def score(state: TaskState, target: Target) -> Score | None:
        if skipped(state):
            return None
        completion = state.output.completion
        value = harness.wikigen_scores(state.metadata, completion)["rouge_l"]
        return Score(value=value, answer=completion)

    return score


def lveval_task(
    config: str,
    repo: str | None = None,
    revision: str | None = None,
    max_tokens: int = 64,
    cutoff: str | None = None,
    export: str | Path | None = None,
    max_length: int | None = None,
    tokenizer: str | None = None,
    overlength: str = "skip",
) -> Task:
    """One LV-Eval config: the baseline's prompt, greedy, scored with AK; ``max_length``,
    ``tokenizer`` and ``overlength`` are :class:`.lengths.LengthPolicy`'s."""
    policy = LengthPolicy.from_options(max_length, tokenizer, overlength)
    prompt, keep = harness.lveval_prompt, _LVEVAL_FIELDS
    args = (prompt, "answer", keep, ak(), max_tokens, cutoff, export, policy)
    return _task(config, repo, revision, *args)


def wikigen_task(
    config: str,
    repo: str | None = None,
    revision: str | None = None,
    max_tokens: int = 1024,
    cutoff: str | None = None,
    export: str | Path | None = None,
    max_length: int | None = None,
    tokenizer: str | None = None,
    overlength: str = "skip",
) -> Task:
    """WikiGenBench's entries, closed-book: the article from its title and outline; the length
    options as :func:`lveval_task`'s."""
    policy = LengthPolicy.from_options(max_length, tokenizer, overlength)
    keep, prompt, score = ("article", "event_id"), harness.wikigen_prompt, rouge_l()
    args = (prompt, "article", keep, score, max_tokens, cutoff, export, policy)
    return _task(config, repo, revision, *args)


def _pooled(key: str) -> Metric:
    """SummHay's pooled figure: ``key`` of :func:`summarize_scores` over every insight judged
    in the run (Citation over the covered ones), as SummHay aggregates a system."""

    def compute(scores: list[SampleScore]) -> float:
        insights = [
            InsightScore(**i) for s in scores for i in (s.score.metadata or {}).get("insights", [])
        ]
        value = summarize_scores(insights)[key]
        return float(value) if value is not None else float("nan")

    return compute


@metric
def coverage() -> Metric:
    """SummHay's Coverage, pooled over every insight."""
    return _pooled("coverage")


@metric
def citation() -> Metric:
    """SummHay's Citation, pooled over every covered insight."""
    return _pooled("citation")


@metric
def joint() -> Metric:
    """SummHay's Joint, pooled over every insight."""
    return _pooled("joint")


@scorer(metrics=[coverage(), citation(), joint()])
def summhay_judge(mode: MetricMode = "paper") -> Scorer:
    """SummHay's scores of one summary: the grader (``--model-role grader=...``, else the
    evaluated model) judges each reference insight with SummHay's judge prompt; the summary's
    citations are checked against the insight's gold documents. The value is the summary's
    Joint; the metrics pool every insight of the run, as SummHay does."""

    async def score(state: TaskState, target: Target) -> Score | None:
        if skipped(state):
            return None
        summary = state.output.completion
        bullets = parse_summary(summary)
        shown = [{"bullet_id": b.bullet_id, "text": b.text} for b in bullets]
        grader = get_model(role="grader")
        verdicts, answers = [], []
        for insight in state.metadata["insights"]:
            variables = {"bullets": shown, "insight": insight["text"]}
            output = await grader.generate(
                chat(prompts.messages("summhay/judge", variables)),
                config=GenerateConfig(
                    temperature=0.0,
                    max_tokens=JUDGE_TOKENS,
                    response_schema=ResponseSchema(
                        name="verdict", json_schema=JSONSchema.model_validate(VERDICT)
                    ),
                ),
            )
            answers.append(output.completion)
            try:
                found, bullet = parse_verdict(output.completion)
            except ValueError:
                found, bullet = "none", None
            verdicts.append(Verdict(insight["insight_id"], found, bullet))
        gold = {i["insight_id"]: set(i["gold_document_ids"]) for i in state.metadata["insights"]}
        scores = score_insights(verdicts, bullets, gold, state.metadata["document_ids"], None, mode)
        mine = summarize_scores(scores)
        return Score(
            value=float(mine["joint"] or 0.0),
            answer=summary,
            metadata={
                "insights": [vars(s) for s in scores],
                "verdicts": [vars(v) for v in verdicts],
                "judge_answers": answers,
                "summary_scores": mine,
            },
        )

    return score


def summhay_prompt(row: Mapping[str, Any]) -> list[ChatMessage]:
    """SummHay's summarization prompt over the whole haystack (the ``full`` setting)."""
    return chat(harness.summhay_messages(row))


def summhay_task(
    config: str,
    repo: str | None = None,
    revision: str | None = None,
    max_tokens: int = 1024,
    mode: MetricMode = "paper",
    cutoff: str | None = None,
    export: str | Path | None = None,
    max_length: int | None = None,
    tokenizer: str | None = None,
    overlength: str = "skip",
) -> Task:
    """SummHay's subtopics: a bullet summary of the haystack, judged per insight; the length
    options as :func:`lveval_task`'s (the pooled metrics are not binned)."""
    policy = LengthPolicy.from_options(max_length, tokenizer, overlength)
    keep, score, prompt = _SUMMHAY_FIELDS, summhay_judge(mode), harness.summhay_messages
    args = (prompt, "reference", keep, score, max_tokens, cutoff, export, policy)
    return _task(config, repo, revision, *args)


def _structured(name: str, schema: dict[str, Any], max_tokens: int) -> GenerateConfig:
    """Greedy, capped at ``max_tokens``, asking for JSON of ``schema`` where the provider can."""
    return GenerateConfig(
        temperature=0.0,
        max_tokens=max_tokens,
        response_schema=ResponseSchema(name=name, json_schema=JSONSchema.model_validate(schema)),
    )


@scorer(metrics={name: [mean()] for name in wikigen_rr.METRICS})
def wikigen_rr_judge(judge_tokens: int = RR_JUDGE_TOKENS) -> Scorer:
    """WikiGenBench's scores of one RR article (:mod:`.wikigen_rr`): ROUGE-L, and the citation,
    writing and informativeness scores judged by the grader (``--model-role grader=...``, else
    the evaluated model). A judged score whose reply held none is NaN, which Inspect leaves out
    of its mean; the metadata holds every request, reply, verdict and failure. ``judge_tokens``
    caps each writing or informativeness judge's reply (a Prometheus feedback is sized to fit)."""
    room = wikigen_rr.feedback_chars(judge_tokens)

    async def score(state: TaskState, target: Target) -> Score | None:
        if skipped(state):
            return None
        article = wikigen_rr.Article.of(state.metadata, state.output.completion)
        grader = get_model(role="grader")
        requests, replies = article.requests(), []
        for request in requests:
            if request.kind == "entails":
                config = _structured("entails", ENTAILS_SCHEMA, ENTAILS_TOKENS)
            else:
                schema = wikigen_rr.reply_schema(request.kind, room)
                config = _structured(request.kind, schema, judge_tokens)
            messages = chat(prompts.messages(request.prompt, request.variables))
            replies.append((await grader.generate(messages, config=config)).completion)
        found = wikigen_rr.score(article, replies)
        value = {k: float("nan") if v is None else v for k, v in found["scores"].items()}
        return Score(
            value=value,
            answer=article.text,
            metadata={
                "claims": [
                    {"section": c.section, "text": c.text, "cited": list(c.cited)}
                    for c in article.claims
                ],
                "requests": [r.kind for r in requests],
                "replies": replies,
                "verdicts": found["verdicts"],
                "supported": found["supported"],
                "failed_scores": found["failed"],
            },
        )

    return score


def wikigenbench_rr(
    config: str,
    repo: str | None = None,
    revision: str | None = None,
    max_tokens: int = 1024,
    cutoff: str | None = None,
    export: str | Path | None = None,
    max_length: int | None = None,
    tokenizer: str | None = None,
    overlength: str = "skip",
    judge_tokens: int | None = None,
) -> Task:
    """WikiGenBench's RR over the ``rr_contexts`` config: the article from the title and the
    documents the toolkit's RR read, scored by :func:`wikigen_rr_judge` (``judge_tokens`` caps
    a writing or informativeness judge's reply, unset: ``RR_JUDGE_TOKENS``); the length options
    as :func:`lveval_task`'s, except that the documents are never cut (``overlength=skip``
    only)."""
    policy = LengthPolicy.from_options(max_length, tokenizer, overlength)
    if policy.overlength != "skip":
        raise ValueError(
            f"overlength {overlength!r}: the RR task cannot cut its documents; use skip"
        )
    prompt, keep, score = (
        harness.wikigen_rr_messages,
        _RR_FIELDS,
        wikigen_rr_judge(judge_tokens or RR_JUDGE_TOKENS),
    )
    args = (prompt, "reference", keep, score, max_tokens, cutoff, export, policy)
    return _task(config, repo, revision, *args)

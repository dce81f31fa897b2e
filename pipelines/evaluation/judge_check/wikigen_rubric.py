"""The judge check for WikiGenBench's writing and informativeness judges (``wikigen-rubric``):
human scores of articles on the six judged dimensions against the configured judge's.

The judge is asked through :func:`pipelines.evaluation.wikigen_judges.judge_articles`, as
``wikigen_baselines`` asks it: once per article and judge call, so the labelled dimensions of
one article share their calls (Fluency and Info come from one call). A judge answer that gives
no usable score is listed with its reason and left out of its dimension's agreement.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchsmith_scoring import wikigen_judges as paper
from pipelines.evaluation.judge_check.agreement import failures, score_agreement
from pipelines.evaluation.judge_check.verdicts import LabelFile, Scored, report_head
from pipelines.evaluation.wikigen_judges import Judged, JudgedScores, judge_articles
from pipelines.llm import LLMClient


def _wanted(items: Sequence[Scored]) -> dict[Judged, tuple[str, ...]]:
    """Each labelled article (in file order) and the dimensions labelled on it (in
    ``SCORES`` order)."""
    dims: dict[Judged, set[str]] = {}
    for item in items:
        dims.setdefault(item.article, set()).add(item.dimension)
    return {a: tuple(s for s in paper.SCORES if s in d) for a, d in dims.items()}


def ask_judges(
    client: LLMClient, items: Sequence[Scored]
) -> tuple[dict[Judged, JudgedScores], int]:
    """The judged scores of every labelled article, and how many judge calls were asked: one
    :func:`judge_articles` per set of labelled dimensions, over the articles that share it."""
    wanted = _wanted(items)
    groups: dict[tuple[str, ...], list[Judged]] = {}
    for article, dims in wanted.items():
        groups.setdefault(dims, []).append(article)
    judged: dict[Judged, JudgedScores] = {}
    for dims, articles in groups.items():
        judged |= zip(
            articles,
            judge_articles(client, articles, dims, "judge-check: wikigen rubric"),
            strict=True,
        )
    calls = sum(len(paper.judges(dims)) for dims in wanted.values())
    return judged, calls


def _row(item: Scored, judged: JudgedScores) -> dict[str, Any]:
    """One label of the report: the human's score and the judge's (or why it failed)."""
    row: dict[str, Any] = {
        "id": item.item_id,
        "where": item.where,
        "title": item.article.title,
        "dimension": item.dimension,
        "label": item.label,
    }
    score = judged.scores[paper.column(item.dimension)]
    if score is not None:
        return row | {"status": "ok", "judge_label": score, "reason": ""}
    reason = next(f["reason"] for f in judged.failed if f["score"] == item.dimension)
    return row | {"status": "failed", "judge_label": None, "reason": reason}


def _dimensions(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The agreement of every labelled dimension, in ``SCORES`` order, over its answered
    labels; ``failed`` counts the labels whose judge answer failed."""
    out = {}
    for dim in paper.SCORES:
        mine = [r for r in rows if r["dimension"] == dim]
        if not mine:
            continue
        answered = [r for r in mine if r["status"] == "ok"]
        stats = score_agreement(
            [r["label"] for r in answered], [r["judge_label"] for r in answered], paper.BOUNDS[dim]
        )
        out[dim] = {"labels": len(mine), "failed": len(mine) - len(answered), **stats}
    return out


def run_rubric_check(labels: LabelFile, client: LLMClient) -> dict[str, Any]:
    """Ask the judges every labelled article of ``labels``; the report as a JSON-ready dict."""
    items = [i for i in labels.items if isinstance(i, Scored)]
    judged, calls = ask_judges(client, items)
    rows = [_row(item, judged[item.article]) for item in items]
    answered = sum(r["status"] == "ok" for r in rows)
    llm = client.stats()
    return {
        **report_head(labels, llm, len(rows)),
        "articles": len(judged),
        "judge_calls": calls,
        "answered": answered,
        "failed": len(rows) - answered,
        "dimensions": _dimensions(rows),
        **failures(rows),
        "llm": llm,
        "verdicts": rows,
    }

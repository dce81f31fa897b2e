"""The ``baselines`` stage: reference retrievers and generation over the built benchmarks.

SummHay: for every haystack, subtopic and retriever, ``summhay_contexts.parquet`` holds the
context (document ids within the token budget) and how many insights it can reach;
``summhay_scores.parquet`` the summary, the judge's verdicts and the scores; ``summhay.json`` (DVC
metrics) the coverage bound and the mean scores per retriever.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from builders.summhay import template_eval
from builders.summhay.records import CONTEXT_SCHEMA, SCORE_SCHEMA, Haystack
from builders.summhay.retrieval import bounds_by_retriever
from pipelines.errors import MissingInputError
from pipelines.evaluation.summhay import average_scores, contexts, evaluate, scorers
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import TableWriter, staged_outputs, write_json
from pipelines.progress import progress_iter
from pipelines.retrieval.models import display_name
from pipelines.retrieval.tokens import TokenCounter
from pipelines.settings import BaselinesSettings
from pipelines.stats import StageStats

CONTEXTS = "summhay_contexts.parquet"
SCORES = "summhay_scores.parquet"
METRICS = "summhay.json"


def run_baselines(
    settings: BaselinesSettings, llm: LLMSettings, haystacks_path: Path, out_dir: Path
) -> StageStats:
    """Run the SummHay retrieval bounds and, if asked, the generation baseline."""
    if not haystacks_path.is_file():
        raise MissingInputError(f"missing {haystacks_path}; run 'dvc repro summhay' first")
    haystacks = [Haystack.from_row(r) for r in pq.read_table(haystacks_path).to_pylist()]
    s = settings.summhay
    counter = TokenCounter(settings.tokenizer)
    retrievers = scorers(settings)
    client = (
        LLMClient.from_settings(llm, responders=template_eval.responders()) if s.summarize else None
    )
    stats = StageStats("baselines")
    bound_rows: list[dict[str, object]] = []
    score_rows: list[dict[str, object]] = []
    with staged_outputs(out_dir) as scratch:
        with (
            TableWriter(scratch / CONTEXTS, CONTEXT_SCHEMA) as context_out,
            TableWriter(scratch / SCORES, SCORE_SCHEMA, batch_rows=32) as score_out,
        ):
            for haystack in progress_iter(haystacks, "baselines: summhay haystacks"):
                stats.update("summhay_haystacks")
                counts = counter.count([d.text for d in haystack.documents])
                batch = list(contexts(haystack, retrievers, counts, s.context_tokens))
                for context in batch:
                    row = context.row()
                    context_out.write(row)
                    bound_rows.append(row)
                    stats.update("summhay_contexts")
                if client is None:
                    continue
                for row in evaluate(client, batch):
                    score_out.write(row)
                    score_rows.append({k: v for k, v in row.items() if k != "verdicts"})
                    stats.update(f"summhay_summaries_{row['status']}")
                    if row["status"] != "ok":
                        stats.drop(f"summary_{str(row['reason']).split(':', 1)[0]}")
        metrics = {
            "context_tokens": s.context_tokens,
            "tokenizer": counter.name,
            "dense_model": display_name(settings.dense_model),
            "coverage_bound": {k: round(v, 2) for k, v in bounds_by_retriever(bound_rows).items()},
            "scores": average_scores(score_rows),
        }
        write_json(scratch / METRICS, metrics)
        stats.write(scratch, client)
    return stats

"""``benchsmith estimate``: what the configured pipeline would ask its model, before any spend.

The stages that ask a model run as a dry run (:mod:`pipelines.llm.dry_run`) into a scratch
folder, in table order, together with the stages between them (chunk, which reads SummHay's
haystacks); their other inputs come from the data folder, so stages without a model (wiki, web,
wikigen) must have run. Each prompt's row counts the calls the cache cannot answer, their
prompt tokens (with ``llm.tokenizer``, a real count), their completion tokens (the cached
answers' mean, else ``max_tokens``) and their price, at the batch prices in ``llm.mode:
batch`` (:meth:`LLMSettings.prices`: half the sync prices unless set). Re-asks cannot be
foreseen: a stand-in answer always passes its check, so each row also gives the most calls
re-asks could add. Asks
that failed in the last run (a stage's ``llm_failures.parquet``) are never answered from the
cache: the estimate says how many of them a rerun asks again.

Without ``--stage``, the search queries a live web stage would send are counted too: the
queries of the selected events the search log does not answer, and the requests and list price
they take on each provider of ``web.search.providers``.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pipelines.dag.invoke import Workspace, run_stage
from pipelines.dag.spec import Stage
from pipelines.dag.table import ARTICLES, STAGES
from pipelines.failure_ledger import FAILURES, read_failures
from pipelines.llm.budget import cost_usd
from pipelines.llm.dry_run import MAX_TOKENS, dry_run
from pipelines.llm.tokens import TokenCounter
from pipelines.sources.web.search.plan import search_plan
from pipelines.sources.wiki.articles import read_articles


@dataclass(frozen=True)
class PromptEstimate:
    """One prompt of one stage: the calls it would make and what they would cost."""

    stage: str
    prompt: str
    asks: int
    cache_hits: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    completion_from: str
    max_calls_with_reasks: int


@dataclass(frozen=True)
class Estimate:
    """Every prompt's estimate, and how its numbers were counted."""

    rows: list[PromptEstimate]
    backend: str
    model: str
    tokenizer: str
    """The tokenizer that counted prompt tokens, or "" for the rough word-based count."""
    retries: dict[str, dict[str, Any]] | None = None
    """Per stage with a failure ledger from the last run: its failed asks and how many of
    them a rerun asks again."""
    search: dict[str, Any] | None = None
    """The search queries a live web stage would send (see the module docstring); ``None``
    when the wiki stage's articles are not there yet or only some stages were asked."""
    mode: str = "sync"
    """``llm.mode``: ``batch`` prices the calls at the batch prices."""

    def total(self, name: str) -> float:
        """One column summed over every row."""
        return sum(getattr(r, name) for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        """The estimate as JSON-ready data, with totals."""
        names = ("asks", "cache_hits", "calls", "prompt_tokens", "completion_tokens", "cost_usd")
        totals = {n: self.total(n) for n in names}
        totals["cost_usd"] = round(totals["cost_usd"], 6)
        return {
            "backend": self.backend,
            "model": self.model,
            "mode": self.mode,
            "tokenizer": self.tokenizer or "approximate (4 tokens per 3 words)",
            "totals": totals,
            "prompts": [asdict(r) for r in self.rows],
            "retries": self.retries or {},
            "search": self.search,
        }


def model_stages(only: Sequence[str] | None = None) -> list[Stage]:
    """The stages a dry run runs, in table order: those asking a model (``only`` those, when
    given) and, without ``only``, the stages between two of them."""
    asking = [s for s in STAGES.values() if "llm" in s.uses]
    if only:
        unknown = set(only) - {s.name for s in asking}
        if unknown:
            names = ", ".join(s.name for s in asking)
            raise ValueError(f"no model-asking stage {sorted(unknown)}; these ask one: {names}")
        return [s for s in asking if s.name in only]
    feeds: set[str] = {s.name for s in asking}
    for stage in reversed(list(STAGES.values())):  # stages whose outputs reach a model stage
        if any(i.stage == stage.name for s in STAGES.values() if s.name in feeds for i in s.inputs):
            feeds.add(stage.name)
    chosen: set[str] = set()
    for stage in STAGES.values():
        upstream = {i.stage for i in stage.inputs}
        if "llm" in stage.uses or (stage.name in feeds and upstream & chosen):
            chosen.add(stage.name)
    return [s for s in STAGES.values() if s.name in chosen]


def estimate(params: Any, where: Workspace, only: Sequence[str] | None = None) -> Estimate:
    """Dry-run the model stages of ``params`` and price what they would ask."""
    llm = params.llm
    counter = TokenCounter(llm.tokenizer)
    stages = model_stages(only)
    panel = params.validate.model_settings(llm)
    rows: list[PromptEstimate] = []
    retries: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="benchsmith-estimate-") as tmp, dry_run(counter) as run:
        scratch = Path(tmp)
        ran = {s.name for s in stages}
        for stage in stages:
            given = {i.name: i.under(scratch) for i in stage.inputs if i.name and i.stage in ran}
            ledger = where.data / stage.name / FAILURES
            run.failed = {row["key"] for row in read_failures(ledger)}
            run.retried = set()
            run_stage(stage.name, params, where, out=scratch / stage.name, **given)
            if run.failed:
                retries[stage.name] = {
                    "ledger": str(ledger),
                    "failed": len(run.failed),
                    "retried": len(run.retried),
                }
            stats = json.loads((scratch / stage.name / "stats.json").read_text("utf-8"))
            for prompt, used in (stats.get("llm") or {}).get("by_prompt", {}).items():
                calls = used["calls"]
                # a panel's prompts are keyed "<prompt> @ <model>": priced at that model's rates
                asked = panel.get(prompt.rpartition(" @ ")[2], llm) if " @ " in prompt else llm
                rows.append(
                    PromptEstimate(
                        stage=stage.name,
                        prompt=prompt,
                        asks=used["asks"],
                        cache_hits=used["cache_hits"],
                        calls=calls,
                        prompt_tokens=used["prompt_tokens"],
                        completion_tokens=used["completion_tokens"],
                        cost_usd=round(
                            cost_usd(asked, used["prompt_tokens"], used["completion_tokens"]), 6
                        ),
                        completion_from=run.completion_source.get(prompt, MAX_TOKENS)
                        if calls
                        else "",
                        max_calls_with_reasks=calls * (asked.reasks + 1),
                    )
                )
    articles = ARTICLES.under(where.data)
    search = None
    if not only and articles.is_file():
        web = params.web
        search = search_plan(web.search, web.search_log, read_articles(articles))
    return Estimate(rows, llm.backend, llm.model, counter.name, retries, search, llm.mode)

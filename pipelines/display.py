"""What the CLI prints as tables (rich): the model-call estimate and the report of every stage's
``stats.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pipelines.dag.table import STAGES
from pipelines.failure_ledger import FAILURES, read_failures, top_reasons


def print_estimate(data: dict[str, Any], out: Console) -> None:
    """One table of the estimate, a row per stage and prompt, with totals."""
    from pipelines.llm.dry_run import MAX_TOKENS

    prices = " (batch prices)" if data.get("mode") == "batch" else ""
    table = Table(title=f"estimate: {data['backend']} {data['model']}{prices}")
    for name in ("stage", "prompt", "calls", "cache hits", "tokens in", "tokens out", "USD"):
        table.add_column(name, justify="left" if name in ("stage", "prompt") else "right")
    table.add_column("calls with re-asks", justify="right")
    for row in data["prompts"]:
        guessed = "*" if row["completion_from"] == MAX_TOKENS else ""
        table.add_row(
            row["stage"], row["prompt"], str(row["calls"]), str(row["cache_hits"]),
            str(row["prompt_tokens"]), f"{row['completion_tokens']}{guessed}",
            f"{row['cost_usd']:.4f}", f"≤ {row['max_calls_with_reasks']}",
        )  # fmt: skip
    t = data["totals"]
    table.add_row(
        "total", "", str(t["calls"]), str(t["cache_hits"]), str(t["prompt_tokens"]),
        str(t["completion_tokens"]), f"{t['cost_usd']:.4f}", "",
    )  # fmt: skip
    out.print(table)
    out.print(f"prompt tokens counted with: {data['tokenizer']}")
    if any(r["completion_from"] == MAX_TOKENS for r in data["prompts"]):
        out.print("* no cached answers of this prompt yet: llm.max_tokens per call, an upper bound")
    for stage, retry in (data.get("retries") or {}).items():
        out.print(
            f"{stage}: {retry['failed']} asks failed in the last run ({retry['ledger']}); a "
            f"rerun asks {retry['retried']} of them again (counted in the calls above)"
        )
    if search := data.get("search"):
        print_search_plan(search, out)


def print_search_plan(search: dict[str, Any], out: Console) -> None:
    """The search queries a live web stage would send, and their requests and price on each
    provider if it served them all."""
    table = Table(
        title=f"search (live): {search['queries']} queries, {search['recorded']} in the search "
        f"log, {search['new']} to ask, {search['results_per_query']} hits each"
    )
    for name in ("provider", "requests", "USD per 1,000", "USD"):
        table.add_column(name, justify="left" if name == "provider" else "right")
    for name, row in search["providers"].items():
        price = "?" if row["usd_per_1000"] is None else f"{row['usd_per_1000']:.2f}"
        usd = "?" if row["usd"] is None else f"{row['usd']:.4f}"
        table.add_row(name, str(row["requests"]), price, usd)
    out.print(table)
    out.print("each provider as if it served every new query; the chain tries them in order")


def print_report(data: Path) -> bool:
    """Print one table per stage from ``data/<stage>/stats.json``, in pipeline order; return
    whether any was found."""
    from pipelines.llm.usage import answers_line

    out = Console()
    found = False
    for stats_file in (data / name / "stats.json" for name in STAGES):
        if not stats_file.is_file():
            continue
        found = True
        stats = json.loads(stats_file.read_text("utf-8"))
        table = Table(title=f"stage {stats.get('stage', stats_file.parent.name)}", min_width=40)
        table.add_column("count")
        table.add_column("n", justify="right")
        for key, value in stats.get("counts", {}).items():
            table.add_row(key, str(value))
        for reason, value in stats.get("dropped", {}).items():
            table.add_row(f"  rejected: {reason}", str(value))
        if llm := stats.get("llm"):
            table.add_row(f"llm ({llm['backend']}, {llm['model']})", "")
            for key in ("asks", "calls", "cache_hits", "reasks", "failed"):
                table.add_row(f"  {key}", str(llm[key]))
            table.add_row(
                "  tokens in / out", f"{llm['prompt_tokens']} / {llm['completion_tokens']}"
            )
            table.add_row("  estimated cost (USD)", f"{llm['estimated_cost_usd']:.4f}")
            if pace := llm.get("concurrency"):
                table.add_row("  rate limited (HTTP 429)", str(pace["rate_limited"]))
                if pace.get("adaptive"):
                    span = f"{pace['final']} ({pace['min']}-{pace['max']} of {pace['ceiling']})"
                    table.add_row("  calls in flight: final (min-max of ceiling)", span)
        out.print(table)
        if llm:
            out.print(f"llm answers: {answers_line(llm)}")
        failed = read_failures(stats_file.parent / FAILURES)
        if failed:
            out.print(f"{len(failed)} failed asks in {FAILURES}; the commonest:")
            for prompt, reason, n in top_reasons(failed):
                out.print(f"  {n} × {prompt}: {reason}")
        files = ", ".join(
            sorted(p.name for p in stats_file.parent.iterdir() if not p.name.startswith("."))
        )
        out.print(f"outputs in {stats_file.parent}/: {files}\n")
    return found

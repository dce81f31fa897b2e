"""The over-length policy and the length bins of the shipped harness tasks.

A task given a model's context window (``max_length``, in tokens) and a tokenizer decides per
row whether the request fits: the prompt as the task sends it, framed as that tokenizer's chat,
plus the reference answer (:meth:`.tokens.Tokenizer.count_request`). The row's published count
(``tokens[<tokenizer name>]``) is reused when the export carries that tokenizer; otherwise the
request is counted here with :mod:`.tokens`.

- ``skip`` (the default): a row that does not fit is not sent and not scored. It is counted and
  reported (how many, which rows, which bins) and left out of every denominator, as lm-eval's
  OpenAI MRCR task drops prompts that, with their answer, exceed the model's length
  (``lm_eval/tasks/mrcr/utils.py``, ``prepare_docs``, lm-evaluation-harness PR #3754).
- ``truncate``: the row is kept and its context's middle is cut until the request fits (LV-Eval's
  truncation: the first and last halves of the budget), with the tokenizer's ids and decode.

Scores are also reported per length bin: MRCR's bins, ``(0, 8k]``, ``(8k, 16k]`` ... ``(512k,
1M]`` tokens, upper edge included (``MRCR_BINS`` in the same file). A row's bin is decided by its
request's count in the chosen tokenizer (the untruncated count under ``truncate``); with no
tokenizer chosen, by the first tokenizer the export publishes, and there are no bins when it
publishes none (nor for a row beyond the last bin). :func:`auc` is MRCR's AUC across the bins
that hold a row.
"""

from __future__ import annotations

import json
import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import Any

from . import tokens

logger = logging.getLogger("benchsmith_scoring")

BINS = tuple(8192 << i for i in range(8))
"""Upper edges of the length bins in tokens: lm-eval's ``MRCR_BINS`` (8k to 1M, doubling; the
first bin starts at 0, each includes its upper edge)."""
POLICIES = ("skip", "truncate")
TRUNCATE_ROUNDS = 8
"""Cuts tried before a row is given up as unable to fit (decoding and re-encoding a cut text
can merge or split a few tokens, so the first cut may miss by a few)."""

Prompt = Callable[[Mapping[str, Any]], str | Sequence[Mapping[str, str]]]
"""A row's prompt as the task sends it: one user message, or chat messages."""


def _short(n: int) -> str:
    return "0" if not n else f"{n >> 20}m" if n >= 1 << 20 else f"{n >> 10}k"


def bin_name(upper: int) -> str:
    """The bin ending at ``upper`` tokens, named as MRCR names its metrics: ``gt_8k_le_16k``."""
    lower = upper // 2 if upper > BINS[0] else 0
    return f"gt_{_short(lower)}_le_{_short(upper)}"


BIN_NAMES = tuple(bin_name(upper) for upper in BINS)


def bin_of(count: int) -> int:
    """The upper edge of the bin holding a request of ``count`` tokens. Raises ValueError above
    the last bin (1M tokens), as MRCR does."""
    for upper in BINS:
        if count <= upper:
            return upper
    raise ValueError(f"a request of {count} tokens is beyond the last length bin ({BINS[-1]})")


def mean_by_bin(items: Iterable[tuple[float, int]]) -> dict[int, float]:
    """The mean score of each bin that holds a row, from ``(score, bin upper edge)`` pairs."""
    grouped: dict[int, list[float]] = defaultdict(list)
    for score, upper in items:
        grouped[int(upper)].append(float(score))
    return {upper: sum(s) / len(s) for upper, s in sorted(grouped.items())}


def auc(items: Iterable[tuple[float, int]]) -> float:
    """MRCR's AUC (``AUC`` in ``lm_eval/tasks/mrcr/utils.py``), on 0-100: the trapezoid area
    under the bins' mean scores against their upper edges (in tokens, linear), over the span
    of the bins that hold a row; empty bins are left out, not counted as 0. One bin: its mean
    times 100; none: NaN. lm-eval's aggregation of the ``*_auc`` metrics."""
    points = list(mean_by_bin(items).items())
    if not points:
        return float("nan")
    width = points[-1][0] - points[0][0]
    if width <= 0:
        return points[-1][1] * 100.0
    area = sum((x1 - x0) * (y0 + y1) / 2.0 for (x0, y0), (x1, y1) in pairwise(points))
    return area / width * 100.0


def total(items: Iterable[float]) -> int:
    """lm-eval's aggregation of the ``count_*`` metrics: rows scored in the bin."""
    return int(sum(items))


def binned(scores: Mapping[str, float], upper: int | None) -> dict[str, Any]:
    """One row's scores for lm-eval's ``process_results``, with its bin's copies (``ak`` gives
    ``ak_gt_0_le_8k``), the AUC's ``(score, bin)`` pairs (``ak_auc``) and ``count_<bin>``; the
    scores alone when the row has no bin. Other bins' keys are absent, so a row adds nothing
    to them."""
    out: dict[str, Any] = dict(scores)
    if upper is None:
        return out
    name = bin_name(upper)
    for metric, value in scores.items():
        out[f"{metric}_{name}"] = value
        out[f"{metric}_auc"] = (value, upper)
    out[f"count_{name}"] = 1
    return out


def row_results(doc: Mapping[str, Any], scores: Callable[[], Mapping[str, float]]) -> dict:
    """lm-eval's ``process_results`` of a row the loader measured: its ``scores()`` with its
    bin's (:func:`binned`) and ``skipped``, the rows its config skipped (the same on every
    row, so their mean is that count); only ``skipped`` for the stand-in of a config none of
    whose rows fit, which is never scored."""
    if doc.get("length_stand_in"):
        return {"skipped": doc["length_skipped"]}
    out = binned(scores(), doc.get("length_bin"))
    if doc.get("length_skipped") is not None:
        out["skipped"] = doc["length_skipped"]
    return out


@dataclass(frozen=True)
class LengthPolicy:
    """What a harness run was told: the model's window (``max_length``, tokens; None: every row
    fits), the tokenizer spec it is counted in (:mod:`.tokens`; None: the export's first
    published one, for the bins only), and what becomes of a row over the window."""

    max_length: int | None = None
    tokenizer: str | None = None
    overlength: str = "skip"

    @classmethod
    def from_options(
        cls, max_length: Any = None, tokenizer: Any = None, overlength: Any = None
    ) -> LengthPolicy:
        """The policy from a task's options (lm-eval's ``--metadata``, Inspect's ``-T``);
        raises ValueError naming the option that is wrong."""
        policy = overlength or "skip"
        if policy not in POLICIES:
            raise ValueError(f"overlength {policy!r}: one of {', '.join(POLICIES)}")
        window = None
        if max_length is not None:
            try:
                window = int(max_length)
            except (TypeError, ValueError):
                window = 0
            if window <= 0 or str(max_length).strip() != str(window):
                raise ValueError(f"max_length {max_length!r}: a positive whole number of tokens")
        if window is not None and not tokenizer:
            raise ValueError(
                "max_length needs the tokenizer it is counted in: tokenizer=NAME (an OpenAI "
                "encoding such as cl100k_base, a tokenizer.json path, or a name the export "
                "publishes counts for in its tokens column)"
            )
        if policy == "truncate" and window is None:
            raise ValueError("overlength 'truncate' needs max_length, the window to cut to")
        return cls(window, str(tokenizer) if tokenizer else None, policy)

    def for_bins(self, published: Mapping[str, Any] | None) -> LengthPolicy:
        """The policy, without its tokenizer when it only decides bins (no window) and it can
        neither be read from ``published`` (a row's ``tokens``) nor loaded: lm-eval passes
        ``--model_args`` to the loader too, where ``tokenizer=`` often names a Hub model for
        the harness's own use. The export's first published tokenizer decides the bins then."""
        if self.max_length is not None or self.tokenizer is None:
            return self
        try:
            name = tokens.TokenizerSpec.parse(self.tokenizer).name
            if not (published and name in published):
                tokens.load(self.tokenizer)
        except tokens.TokenizerError as exc:
            logger.warning("benchsmith lengths: bins in the published counts, not %s", exc)
            return replace(self, tokenizer=None)
        return self

    def name(self, published: Mapping[str, Any] | None) -> str | None:
        """The tokenizer that decides fit and bin: the chosen one's name, else the first one
        ``published`` (a row's ``tokens``) holds."""
        if self.tokenizer:
            return tokens.TokenizerSpec.parse(self.tokenizer).name
        return next(iter(published), None) if published else None


@dataclass
class RowLength:
    """One row's length under a policy: its request's ``tokens`` (None without a tokenizer),
    its bin's upper edge, whether it is sent, and its cut context under ``truncate``."""

    index: int
    tokens: int | None = None
    upper: int | None = None
    fits: bool = True
    context: str | None = None
    reason: str = ""


@dataclass
class LengthReport:
    """What a policy did to one config: machine-readable (:meth:`to_dict`) and logged."""

    config: str
    tokenizer: str | None
    max_length: int | None
    overlength: str
    rows: int = 0
    kept: int = 0
    skipped: int = 0
    truncated: int = 0
    counted: int = 0
    """Rows counted here, the export publishing no count in this tokenizer."""
    skipped_rows: list[int] = field(default_factory=list)
    skipped_bins: dict[str, int] = field(default_factory=dict)
    kept_bins: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def message(self) -> str:
        """The log line: what was skipped or cut, and the report as JSON."""
        head = f"{self.config}: {self.kept} of {self.rows} rows scored"
        if self.max_length is not None:
            head += (
                f"; {self.skipped} skipped and {self.truncated} truncated over "
                f"max_length {self.max_length} tokens of {self.tokenizer}"
            )
        return f"{head} {json.dumps(self.to_dict(), sort_keys=True)}"

    def log(self, path: str | Path | None = None) -> None:
        """Log :meth:`message` (a warning when rows were skipped) and append the report as a
        JSON line to ``path`` when given."""
        level = logging.WARNING if self.skipped else logging.INFO
        logger.log(level, "benchsmith lengths: %s", self.message())
        if path:
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(self.to_dict(), sort_keys=True) + "\n")


def answer_of(row: Mapping[str, Any], target: str) -> str | None:
    value = row.get(target)
    return None if value is None else str(value)


def count_request(row: Mapping[str, Any], spec: str, prompt: Prompt, target: str) -> int:
    """The row's request counted in the tokenizer ``spec`` names (the export publishes no count
    in it): the task's prompt framed as a chat, plus the reference answer."""
    return tokens.load(spec).count_request(prompt(row), answer_of(row, target))


def cut_middle(text: str, tokenizer: tokens.Tokenizer, keep: int) -> str:
    """``text`` with its middle cut out so ``keep`` of its tokens remain: the first half and the
    last (LV-Eval's truncation)."""
    ids = tokenizer.ids(text)
    if keep >= len(ids):
        return text
    head = max(keep, 0) // 2
    tail = max(keep, 0) - head
    return tokenizer.decode(ids[:head]) + (tokenizer.decode(ids[len(ids) - tail :]) if tail else "")


def truncated(
    row: Mapping[str, Any], over: int, policy: LengthPolicy, prompt: Prompt, target: str,
    context: str,
) -> str | None:  # fmt: skip
    """The row's context cut so its request fits ``policy.max_length``, or None when even an
    empty context does not fit."""
    assert policy.tokenizer is not None and policy.max_length is not None
    tokenizer = tokens.load(policy.tokenizer)
    text, answer = str(row[context]), answer_of(row, target)
    size = len(tokenizer.ids(text))
    drop = over
    for _ in range(TRUNCATE_ROUNDS):
        if drop > size:
            return None
        cut = cut_middle(text, tokenizer, size - drop)
        excess = tokenizer.count_request(prompt({**row, context: cut}), answer) - policy.max_length
        if excess <= 0:
            return cut
        drop += excess
    return None


def measure(
    published: Sequence[Mapping[str, Any] | None],
    row_at: Callable[[int], Mapping[str, Any]],
    policy: LengthPolicy,
    prompt: Prompt,
    target: str,
    config: str,
    context: str = "context",
) -> tuple[list[RowLength], LengthReport]:
    """Each row's length and fate under ``policy``: ``published`` holds the rows' ``tokens``
    (None where a row has none), ``row_at`` reads a whole row, only when it must be counted or
    cut. Returns the rows' lengths and the config's report."""
    first = next((p for p in published if p), None)
    policy = policy.for_bins(first)
    name = policy.name(first)
    report = LengthReport(config, name, policy.max_length, policy.overlength, rows=len(published))
    lengths = [RowLength(i) for i in range(len(published))]
    skipped_bins: Counter[str] = Counter()
    kept_bins: Counter[str] = Counter()
    for length, counts in zip(lengths, published, strict=True):
        if name is not None:
            if counts and counts.get(name) is not None:
                length.tokens = int(counts[name])
            elif policy.tokenizer is not None:
                row = row_at(length.index)
                length.tokens = count_request(row, policy.tokenizer, prompt, target)
                report.counted += 1
        if length.tokens is not None and length.tokens <= BINS[-1]:
            length.upper = bin_of(length.tokens)  # beyond the last bin: none, as MRCR has none
        over = (length.tokens or 0) - policy.max_length if policy.max_length is not None else 0
        if over > 0 and policy.overlength == "truncate":
            length.context = truncated(row_at(length.index), over, policy, prompt, target, context)
            length.fits = length.context is not None
            length.reason = "" if length.fits else "over max_length even with no context"
            report.truncated += length.fits
        elif over > 0:
            length.fits = False
            length.reason = f"{length.tokens} tokens of {name} > max_length {policy.max_length}"
        bins = kept_bins if length.fits else skipped_bins
        if length.upper is not None:
            bins[bin_name(length.upper)] += 1
        if not length.fits:
            report.skipped_rows.append(length.index)
    report.skipped = len(report.skipped_rows)
    report.kept = report.rows - report.skipped
    report.skipped_bins, report.kept_bins = dict(skipped_bins), dict(kept_bins)
    return lengths, report

"""The reviews file ``reviews/<version>.jsonl``: people's decisions on the items of a release.

``benchsmith review`` appends one JSON line per decision: ``release``, ``dataset``, ``config``,
``item`` (the config's ``ids`` joined by ``/``, as ``release.json`` lists it), ``reviewer``,
``decision`` (``accept`` or ``reject``), ``reason``, ``fields`` (per reviewed field a
``verdict``, ``correct`` or ``wrong``, and an optional ``correction``) and ``at`` (UTC). The
file is only appended to; the latest line of a reviewer on an item wins.

Publish reads it (:class:`DatasetReview`): an item rejected by any reviewer is left out of every
config whose items are named by the same columns; a correction (the latest of any reviewer)
replaces the published field in those configs, in a row carrying KPR rules with its rules applied.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from builders.lveval.kpr import Replacer
from builders.lveval.records import Rule
from builders.text import json_object
from pipelines.errors import ReviewError
from pipelines.publish.registry import DATASETS, ConfigSpec

REVIEWS = "reviews"
"""The project folder of the reviews files (committed; a DVC dependency of ``publish``)."""
DECISIONS = ("accept", "reject")
VERDICTS = ("correct", "wrong")
RULES = "replacement_rules"
"""The LV-Eval field whose correction (original -> replacement) goes to ``lveval.kpr.rules_file``
rather than into published rows."""
KEYS = ("release", "dataset", "config", "item", "reviewer", "decision", "reason", "fields", "at")


@dataclass(frozen=True)
class ReviewedField:
    """A field a reviewer judges: a published column, its label, and whether a corrected value
    may replace it (``many``: a list of strings, one value a line in the form)."""

    name: str
    label: str
    correctable: bool = False
    many: bool = False


@dataclass(frozen=True)
class ReviewTarget:
    """What is reviewed of a dataset: the items of ``config`` and their ``fields``."""

    config: str
    fields: tuple[ReviewedField, ...]

    def field(self, name: str) -> ReviewedField | None:
        return next((f for f in self.fields if f.name == name), None)


TARGETS: dict[str, ReviewTarget] = {
    "lveval": ReviewTarget(
        "qa",
        (
            ReviewedField("question", "Question", correctable=True),
            ReviewedField("answers", "Answers", correctable=True, many=True),
            ReviewedField("evidence", "Evidence passages"),
            ReviewedField("confusing_facts", "Confusing facts (CFI)"),
            ReviewedField(RULES, "Replacement rules (KPR)"),
        ),
    ),
    "summhay": ReviewTarget(
        "subtopics",
        (
            ReviewedField("query", "Query", correctable=True),
            ReviewedField("insights", "Insights and their documents"),
        ),
    ),
    "wikigenbench": ReviewTarget(
        "entries",
        (
            ReviewedField("title", "Title", correctable=True),
            ReviewedField("summary", "Lead"),
            ReviewedField("outline", "Outline"),
            ReviewedField("documents", "Documents support the article"),
        ),
    ),
}
"""The reviewed config and fields of each dataset (LV-Eval's QA items, SummHay's subtopics with
their insights, WikiGenBench's entries)."""


@dataclass(frozen=True)
class Verdict:
    """A reviewer's verdict on one field, with the corrected value if they gave one (a string,
    a list of strings for a ``many`` field, ``{original: replacement}`` for KPR rules)."""

    verdict: str
    correction: str | list[str] | dict[str, str] | None = None


@dataclass(frozen=True)
class Review:
    """One line of the reviews file; ``line`` is its line number (not written)."""

    release: str
    dataset: str
    config: str
    item: str
    reviewer: str
    decision: str
    reason: str
    fields: dict[str, Verdict]
    at: str
    line: int = field(default=0, compare=False)

    def to_line(self) -> str:
        """The JSON line (with its newline), keys in the file's order."""
        data = asdict(self)
        data.pop("line")
        data["fields"] = {
            k: {"verdict": v.verdict, **({"correction": v.correction} if v.correction else {})}
            for k, v in self.fields.items()
        }
        return json.dumps(data, ensure_ascii=False) + "\n"


def reviews_path(folder: Path, version: str) -> Path:
    """The reviews file of release ``version`` in ``folder`` (the project's ``reviews/``)."""
    return folder / f"{version}.jsonl"


def parse_review(text: str, where: str) -> Review:
    """One line as a :class:`Review`; errors start with ``where`` (``file:line``) and name the
    key."""
    try:
        data = json_object(text, where, KEYS, broken="not a whole JSON line")
    except ValueError as exc:
        raise ReviewError(str(exc)) from None
    for key in ("release", "dataset", "config", "item", "reviewer", "decision", "at"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ReviewError(f"{where}: {key!r} must be a non-empty string")
    target = TARGETS.get(data["dataset"])
    if target is None:
        raise ReviewError(f"{where}: unknown dataset {data['dataset']!r} (known: {_known()})")
    if data["config"] != target.config:
        raise ReviewError(
            f"{where}: config {data['config']!r} is not reviewed; {data['dataset']} reviews "
            f"{target.config!r}"
        )
    if data["decision"] not in DECISIONS:
        raise ReviewError(f"{where}: 'decision' must be accept or reject")
    reason = data.get("reason", "")
    if not isinstance(reason, str) or (data["decision"] == "reject" and not reason.strip()):
        raise ReviewError(f"{where}: 'reason' must be a string, and say why for a reject")
    fields = data.get("fields", {})
    if not isinstance(fields, dict):
        raise ReviewError(f"{where}: 'fields' must map field names to verdicts")
    verdicts = {name: _verdict(value, target, name, where) for name, value in fields.items()}
    return Review(
        data["release"], data["dataset"], data["config"], data["item"], data["reviewer"].strip(),
        data["decision"], reason.strip(), verdicts, data["at"],
    )  # fmt: skip


def _known() -> str:
    return ", ".join(TARGETS)


def _verdict(value: Any, target: ReviewTarget, name: str, where: str) -> Verdict:
    """One field's verdict, checked against what the field takes."""
    spec = target.field(name)
    if spec is None:
        known = ", ".join(f.name for f in target.fields)
        raise ReviewError(f"{where}: unknown field {name!r} (reviewed: {known})")
    if not isinstance(value, dict) or value.get("verdict") not in VERDICTS:
        raise ReviewError(f"{where}: field {name!r} needs a 'verdict' of correct or wrong")
    if unknown := sorted(set(value) - {"verdict", "correction"}):
        raise ReviewError(f"{where}: field {name!r}: unknown key {unknown[0]!r}")
    correction = value.get("correction")
    if correction is None:
        return Verdict(value["verdict"])
    if name == RULES:
        ok = isinstance(correction, dict) and all(
            isinstance(k, str) and k and isinstance(v, str) and v for k, v in correction.items()
        )
    elif spec.many:
        ok = isinstance(correction, list) and all(isinstance(v, str) and v for v in correction)
    else:
        ok = spec.correctable and isinstance(correction, str) and bool(correction.strip())
    if not ok:
        raise ReviewError(f"{where}: field {name!r} cannot take the correction {correction!r}")
    return Verdict(value["verdict"], correction)


def read_reviews(path: Path, release: str) -> list[Review]:
    """Every line of a reviews file; a line that is not a whole review, or that names another
    release, is an error naming the file and the line."""
    reviews = []
    for n, text in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not text.strip():
            continue
        review = parse_review(text, f"{path}:{n}")
        if review.release != release:
            raise ReviewError(
                f"{path}:{n}: names release {review.release!r}; this file reviews {release!r}"
            )
        reviews.append(replace(review, line=n))
    return reviews


def load_reviews(path: Path, release: str) -> list[Review] | None:
    """The reviews of ``release`` in ``path``, None when there is no such file."""
    return read_reviews(path, release) if path.is_file() else None


def append_review(path: Path, review: Review) -> None:
    """Append one line with a single write to a file opened for appending, then sync: a reader
    sees the whole line or none of it. A file whose last line was left unfinished is refused."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = review.to_line().encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            raise ReviewError(f"{path}: the last line is unfinished; remove it, then review again")
        if os.write(fd, data) != len(data):
            raise ReviewError(f"{path}: the line was not written whole")
        os.fsync(fd)
    finally:
        os.close(fd)


def latest(reviews: Iterable[Review]) -> list[Review]:
    """The latest line of every reviewer on every item, in the file's order."""
    last: dict[tuple[str, str, str], Review] = {}
    for review in reviews:
        key = (review.dataset, review.item, review.reviewer)
        last.pop(key, None)
        last[key] = review
    return list(last.values())


def item_keys(table: pa.Table, ids: tuple[str, ...]) -> list[str]:
    """Every row's item id: its ``ids`` columns joined by ``/`` (as ``release.json`` has it)."""
    columns = [table.column(c).to_pylist() for c in ids]
    return ["/".join(str(v) for v in values) for values in zip(*columns, strict=True)]


@dataclass
class ConfigReview:
    """What the reviews do to one config: rows to leave out and fields to correct; it keeps the
    ids it saw, so that a review naming an item the build has not is an error."""

    ids: tuple[str, ...]
    rejected: Collection[str]
    corrections: Mapping[str, Mapping[str, str | list[str]]]
    seen: set[str] = field(default_factory=set)

    def apply(self, table: pa.Table, spec: ConfigSpec) -> pa.Table:
        """One batch (source column names) without rejected rows, with corrections applied."""
        keys = item_keys(table, self.ids)
        self.seen.update(keys)
        if self.rejected:
            kept = [k not in self.rejected for k in keys]
            table = table.filter(pa.array(kept, pa.bool_()))
            keys = [k for k, keep in zip(keys, kept, strict=True) if keep]
        fixes = [(i, self.corrections[k]) for i, k in enumerate(keys) if k in self.corrections]
        for name in dict.fromkeys(f for _, fix in fixes for f in fix):
            table = _corrected(
                table, spec, name, [(i, fix[name]) for i, fix in fixes if name in fix]
            )
        return table


def _corrected(
    table: pa.Table, spec: ConfigSpec, name: str, fixes: list[tuple[int, str | list[str]]]
) -> pa.Table:
    """Column ``name`` (published; its source name when renamed) with ``fixes`` (row, value);
    a row carrying KPR rules gets the value with its rules applied."""
    column = {published: source for source, published in spec.rename}.get(name, name)
    if column not in table.column_names:
        return table
    values = table.column(column).to_pylist()
    rules = table.column(RULES).to_pylist() if RULES in table.column_names else None
    for row, value in fixes:
        replace = Replacer(
            [Rule(r["orig"], r["repl"]) for r in (rules[row] or [])] if rules else []
        )
        values[row] = [replace(v) for v in value] if isinstance(value, list) else replace(value)
    index = table.column_names.index(column)
    array = pa.array(values, table.schema.field(column).type)
    return table.set_column(index, table.schema.field(column), array)


@dataclass
class DatasetReview:
    """The reviews of one dataset's items: rejections, corrections and what each config saw."""

    dataset: str
    reviews: list[Review]
    """Every line of the dataset, in the file's order."""
    path: Path
    configs: dict[str, ConfigReview] = field(default_factory=dict)

    @classmethod
    def of(cls, reviews: list[Review], dataset: str, path: Path) -> DatasetReview | None:
        """The dataset's reviews (None when no line names it)."""
        mine = [r for r in reviews if r.dataset == dataset]
        return cls(dataset, mine, path) if mine else None

    @property
    def ids(self) -> tuple[str, ...]:
        """The columns naming the reviewed items."""
        target = TARGETS[self.dataset].config
        return next(c.ids for c in DATASETS[self.dataset].configs if c.name == target)

    def rejections(self) -> dict[str, Review]:
        """Item -> the first latest decision rejecting it (any reviewer's reject leaves it out)."""
        out: dict[str, Review] = {}
        for review in latest(self.reviews):
            if review.decision == "reject":
                out.setdefault(review.item, review)
        return out

    def corrections(self) -> dict[str, dict[str, tuple[str | list[str], Review]]]:
        """Item -> field -> (corrected value, its review): the latest line of any reviewer wins;
        KPR rules are left out (they feed ``lveval.kpr.rules_file``)."""
        out: dict[str, dict[str, tuple[str | list[str], Review]]] = {}
        rejected = self.rejections()
        for review in self.reviews:  # file order: a later line overrides
            for name, verdict in review.fields.items():
                value = verdict.correction
                if value is not None and name != RULES and review.item not in rejected:
                    out.setdefault(review.item, {})[name] = (value, review)  # type: ignore[assignment]
        return out

    def for_config(self, name: str, spec: ConfigSpec) -> ConfigReview | None:
        """The review of exported config ``name`` when its items are the reviewed ones."""
        if spec.ids != self.ids:
            return None
        fixes = {
            item: {f: value for f, (value, _) in fields.items()}
            for item, fields in self.corrections().items()
        }
        self.configs[name] = ConfigReview(spec.ids, set(self.rejections()), fixes)
        return self.configs[name]

    def check_items(self) -> None:
        """Every line names an item of its config in this build, or the file and line say not."""
        for review in self.reviews:
            config = self.configs.get(review.config)
            if config is None or review.item not in config.seen:
                raise ReviewError(
                    f"{self.path}:{review.line}: unknown item {review.item!r} of "
                    f"{review.dataset}/{review.config} (not in this build of release "
                    f"{review.release})"
                )

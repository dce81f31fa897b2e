"""WikiGenBench's generation baselines over the built entries.

Each entry's related documents arrive as the chunk stage's 256-word chunks. A reranker orders
them for a query and the best are read while they fit ``context_tokens``, at most ``top_k``:

- **RR** (retrieve-then-read): rerank for the event title; write the whole article.
- **PRR** (plan-retrieve-read): rerank for the title and plan an outline; for each section,
  rerank for title and heading and write the section; join the sections.

Every sentence's citations are then checked by an entailment judge through the LLM layer, and
scored as in :mod:`benchsmith_scoring.wikigen`. Without generation, each reranker's context is
still scored by *reference recall*: the share of the reference article's numbers and names that
its chunks contain, a bound on what any reader of that context could state.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from benchsmith_scoring.leval.metrics import rouge
from benchsmith_scoring.wikigen import ENTAILS_PROMPT, EntailsError, entails_variables, read_entails
from benchsmith_scoring.wikigen_judges import SCORES, column, headings, mean_scores
from builders.ranking import fill_context
from builders.text import specific_tokens
from builders.wikigen.generation import (
    Claim,
    article_claims,
    citation_scores,
    claims,
    has_sentences,
    outline,
    reference_article,
)
from builders.wikigen.records import Entry
from pipelines.embed.records import Chunk
from pipelines.errors import MissingInputError
from pipelines.evaluation.wikigen_baselines_settings import WikigenBaselines
from pipelines.evaluation.wikigen_judges import Judged, judge_articles
from pipelines.llm import AnswerError, Ask, LLMClient, Outcome, TextAnswer
from pipelines.retrieval.rankers import Ranker


@dataclass(frozen=True)
class TokenChunk:
    """One chunk of an entry's related documents, with its token count."""

    chunk_id: str
    document_id: str
    text: str
    tokens: int


@dataclass(frozen=True)
class EntryChunks:
    """What the baselines need of a WikiGenBench entry: its reference text and its chunks."""

    event_id: str
    title: str
    split: str
    reference: str
    chunks: tuple[TokenChunk, ...]
    outline: tuple[str, ...] = ()
    """The reference article's section headings."""


def read_entries(
    entries_path: Path,
    chunks_path: Path,
    count: Callable[[Sequence[str]], list[int]],
    splits: Sequence[str] | None = None,
) -> list[EntryChunks]:
    """Entries (of ``splits``, all when ``None``) with the web chunks of their own documents;
    ``count`` gives token counts."""
    for path, what in ((entries_path, "the wikigen entries"), (chunks_path, "the chunks")):
        if not path.is_file():
            raise MissingInputError(f"missing {path} ({what})", path)
    by_entry: dict[str, list[Chunk]] = defaultdict(list)
    web = pq.read_table(chunks_path, filters=[("corpus", "=", "web")])
    for chunk in map(Chunk.from_row, web.to_pylist()):
        by_entry[chunk.entry_id].append(chunk)
    entries = [Entry.from_row(r) for r in pq.read_table(entries_path).to_pylist()]
    entries = [e for e in entries if splits is None or e.split in splits]
    if entries and not by_entry and any(e.documents for e in entries):
        raise MissingInputError(
            f"{chunks_path} holds no chunks of web documents; add 'web' to chunk.corpora and "
            "run 'dvc repro chunk'",
            chunks_path,
        )
    out = []
    for entry in entries:
        own = {d.doc_id for d in entry.documents}
        mine = [c for c in by_entry.get(entry.event_id, []) if c.document_id in own]
        counts = count([c.text for c in mine])
        chunks = [
            TokenChunk(c.chunk_id, c.document_id, c.text, n)
            for c, n in zip(mine, counts, strict=True)
        ]
        reference = reference_article(entry.summary, (s.text for s in entry.sections))
        out.append(
            EntryChunks(
                entry.event_id,
                entry.title,
                entry.split,
                reference,
                tuple(chunks),
                tuple(entry.outline),
            )
        )
    return out


def context(
    entry: EntryChunks, query: str, rank: Ranker, top_k: int, budget: int
) -> list[TokenChunk]:
    """The entry's chunks in score order for ``query``, while they fit ``budget`` tokens, at
    most ``top_k``."""
    ids = [str(i) for i in range(len(entry.chunks))]
    scores = rank(query, [c.text for c in entry.chunks])
    chosen = fill_context(ids, scores, [c.tokens for c in entry.chunks], budget)[:top_k]
    return [entry.chunks[int(i)] for i in chosen]


def reference_recall(reference: str, chunks: Sequence[TokenChunk]) -> float:
    """Share of the reference's numbers and capitalised names found in ``chunks``."""
    wanted = specific_tokens(reference)
    if not wanted:
        return 0.0
    found = set().union(*(specific_tokens(c.text) for c in chunks))
    return len(wanted & found) / len(wanted)


class EntailsAnswer(BaseModel):
    """The judge's verdict on one (document, sentence) pair."""

    entails: bool

    @classmethod
    def from_reply(cls, text: str) -> EntailsAnswer:
        """Read the reply as the shipped harness task reads it (``read_entails``)."""
        try:
            return cls(entails=read_entails(text))
        except EntailsError as exc:
            raise AnswerError(str(exc)) from None


def entails_ask(premise: str, claim: str) -> Ask[EntailsAnswer]:
    """The entailment judge's ask: does ``premise`` (a cited chunk) entail ``claim``."""
    return Ask(ENTAILS_PROMPT, entails_variables(premise, claim), EntailsAnswer)


def _documents(chunks: Sequence[TokenChunk]) -> list[dict[str, Any]]:
    return [{"n": k, "text": c.text} for k, c in enumerate(chunks, 1)]


def _has_sentences(answer: TextAnswer) -> str | None:
    return None if has_sentences(answer.text) else "the article has no sentences"


def _has_outline(limit: int) -> Callable[[TextAnswer], str | None]:
    def check(answer: TextAnswer) -> str | None:
        return None if outline(answer.text, limit) else "the outline names no section"

    return check


@dataclass
class Article:
    """One generated article (or why there is none) before its citations are judged."""

    entry: EntryChunks
    method: str
    retriever: str
    chunks: dict[str, TokenChunk] = field(default_factory=dict)
    headings: list[str] = field(default_factory=list)
    text: str = ""
    found: list[Claim] = field(default_factory=list)
    error: str = ""

    def read(self, shown: Sequence[TokenChunk]) -> list[str]:
        """Remember the chunks shown; their ids in order."""
        self.chunks.update((c.chunk_id, c) for c in shown)
        return [c.chunk_id for c in shown]

    @property
    def outline(self) -> list[str]:
        """Its section headings as judged and measured: a PRR article's planned outline, an RR
        article's own ``==Heading==`` lines."""
        return self.headings if self.method == "prr" else headings(self.text)


def write_articles(
    client: LLMClient,
    entries: Sequence[EntryChunks],
    titles: Mapping[tuple[str, str], list[TokenChunk]],
    ranks: dict[str, Ranker],
    s: WikigenBaselines,
) -> list[Article]:
    """RR with every reranker and PRR with ``prr_retriever``, for every entry; ``titles`` holds
    each entry's context for its title by ``(event_id, reranker)``, ``ranks`` serve PRR's
    sections. An entry without chunks fails without asking."""
    articles: list[Article] = []
    rr: list[tuple[Article, Ask[Any]]] = []
    plans: list[tuple[Article, Ask[Any]]] = []
    for entry in entries:
        methods = [("rr", name) for name in s.retrievers] if "rr" in s.methods else []
        methods += [("prr", s.prr_retriever)] if "prr" in s.methods else []
        for method, name in methods:
            article = Article(entry, method, name)
            articles.append(article)
            if not entry.chunks:
                article.error = "no_chunks: none of the entry's documents has text"
                continue
            shown = titles[(entry.event_id, name)]
            article.read(shown)
            variables = {"title": entry.title, "documents": _documents(shown)}
            if method == "rr":
                rr.append((article, Ask("wikigen/rr", variables, TextAnswer, _has_sentences)))
            else:
                check = _has_outline(s.prr_sections)
                variables["sections"] = s.prr_sections
                plans.append((article, Ask("wikigen/outline", variables, TextAnswer, check)))
    for article, outcome in _answers(client, rr, "RR articles"):
        if not _failed(article, outcome):
            article.text = outcome.value.text
            article.found = article_claims(article.text, list(article.chunks))
    sections: list[tuple[tuple[Article, str, list[str]], Ask[Any]]] = []
    for plan, outcome in _answers(client, plans, "PRR outlines"):
        if _failed(plan, outcome):
            continue
        plan.headings = outline(outcome.value.text, s.prr_sections)
        entry = plan.entry
        for heading in plan.headings:
            query = entry.title if heading.lower() == "introduction" else f"{entry.title} {heading}"
            shown = context(entry, query, ranks[plan.retriever], s.top_k, s.context_tokens)
            variables = {"title": entry.title, "section": heading, "documents": _documents(shown)}
            ask = Ask("wikigen/section", variables, TextAnswer, _has_sentences)
            sections.append(((plan, heading, plan.read(shown)), ask))
    for (plan, heading, ids), outcome in _answers(client, sections, "PRR sections"):
        if plan.error or _failed(plan, outcome, f"section {heading!r}: "):
            continue
        plan.text += f"=={heading}==\n{outcome.value.text.strip()}\n\n"
        plan.found += claims(outcome.value.text, heading, ids)
    return articles


def _answers(
    client: LLMClient, asked: Sequence[tuple[Any, Ask[Any]]], what: str
) -> Iterable[tuple[Any, Outcome[Any]]]:
    outcomes = client.ask_many((a for _, a in asked), f"wikigen baselines: {what}", len(asked))
    return zip((item for item, _ in asked), outcomes, strict=True)


def _failed(article: Article, outcome: Outcome[Any], where: str = "") -> bool:
    if outcome.ok:
        return False
    article.error = where + outcome.error
    article.found = []
    return True


Measure = Callable[[Sequence["Article"]], list[dict[str, Any]]]
"""Columns measured on written articles against their references (METEOR, the outline
metrics), one mapping per article in order."""


def judge(
    client: LLMClient,
    articles: Sequence[Article],
    scores: Sequence[str] = (),
    measure: Measure | None = None,
) -> Iterable[dict[str, Any]]:
    """Judge every citation of every article, and its writing and informativeness ``scores``
    (:mod:`.wikigen_judges`), add what ``measure`` gives, and score it; one row per article."""
    written = [a for a in articles if not a.error]
    measured = measure(written) if measure is not None and written else [{} for _ in written]
    by_written = {id(a): m for a, m in zip(written, measured, strict=True)}
    judged = judge_articles(
        client,
        [Judged(a.entry.title, a.text, a.outline) for a in written],
        scores,
    )
    by_article = {id(a): j for a, j in zip(written, judged, strict=True)}
    asks = [
        entails_ask(a.chunks[c].text, claim.text)
        for a in articles
        for claim in a.found
        for c in claim.cited
        if c
    ]
    verdicts = iter(client.ask_many(asks, "wikigen baselines: judging citations", len(asks)))
    for a in articles:
        row = {
            "event_id": a.entry.event_id,
            "title": a.entry.title,
            "split": a.entry.split,
            "method": a.method,
            "retriever": a.retriever,
            "chunk_ids": list(a.chunks),
            "outline": a.headings,
            "article": a.text,
        }
        if a.error:
            yield row | {"status": "failed", "reason": a.error, "claims": []}
            continue
        supported: list[list[bool | None]] = []
        failed: list[str] = []
        for claim in a.found:
            marks: list[bool | None] = []
            for c in claim.cited:
                outcome = next(verdicts) if c else None
                if outcome is not None and not outcome.ok:
                    failed.append(outcome.error)
                    marks.append(None)  # no verdict: neither supported nor unsupported
                else:
                    marks.append(bool(outcome and outcome.value.entails))
            supported.append(marks)
        rated = by_article[id(a)]
        measured_columns = dict(by_written[id(a)])
        measured_failed = measured_columns.pop("failed", [])
        cites = citation_scores(a.found, [[bool(m) for m in marks] for marks in supported])
        citations: dict[str, float | None] = {
            "citation_recall": cites.recall,
            "citation_precision": cites.precision,
            "citation_rate": cites.rate,
        }
        if failed:
            # a citation the judge gave no verdict on is not counted unsupported: the article's
            # citation scores are failed scores, left out of the means, with the reason
            why = f"{len(failed)} citation verdicts failed, first: {failed[0]}"
            citations = dict.fromkeys(citations)
            measured_failed = [{"score": name, "reason": why} for name in citations] + list(
                measured_failed
            )
        yield row | {
            "status": "ok",
            "reason": f"{len(failed)} judge answers failed" if failed else "",
            "sentences": cites.sentences,
            "cited_sentences": cites.cited_sentences,
            **citations,
            "rouge_l": rouge(a.text, a.entry.reference, stem=True).rougeL,
            "words": sum(c.words for c in a.found),
            "sections": len({c.section for c in a.found}),
            "claims": [
                {"section": c.section, "text": c.text, "cited": list(c.cited), "supported": m}
                for c, m in zip(a.found, supported, strict=True)
            ],
            **rated.scores,
            **measured_columns,
            "failed_scores": rated.failed + measured_failed,
        }


ARTICLE_SCHEMA = pa.schema(
    [
        pa.field("event_id", pa.string()),
        pa.field("title", pa.string()),
        pa.field("split", pa.string()),
        pa.field("method", pa.string()),
        pa.field("retriever", pa.string()),
        pa.field("chunk_ids", pa.list_(pa.string())),
        pa.field("outline", pa.list_(pa.string())),
        pa.field("article", pa.string()),
        pa.field("status", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("sentences", pa.int32()),
        pa.field("cited_sentences", pa.int32()),
        pa.field("citation_recall", pa.float64()),
        pa.field("citation_precision", pa.float64()),
        pa.field("citation_rate", pa.float64()),
        pa.field("rouge_l", pa.float64()),
        pa.field("words", pa.int32()),
        pa.field("sections", pa.int32()),
        *(pa.field(column(name), pa.int8()) for name in SCORES),
        pa.field("meteor", pa.float64()),
        pa.field("heading_soft_recall", pa.float64()),
        pa.field("heading_entity_recall", pa.float64()),
        pa.field(
            "failed_scores",
            pa.list_(pa.struct([pa.field("score", pa.string()), pa.field("reason", pa.string())])),
        ),
        pa.field(
            "claims",
            pa.list_(
                pa.struct(
                    [
                        pa.field("section", pa.string()),
                        pa.field("text", pa.string()),
                        pa.field("cited", pa.list_(pa.string())),
                        pa.field("supported", pa.list_(pa.bool_())),
                    ]
                )
            ),
        ),
    ]
)
"""One generated article: its context, text, status and scores, and every judged sentence."""

RETRIEVAL_SCHEMA = pa.schema(
    [
        pa.field("event_id", pa.string()),
        pa.field("split", pa.string()),
        pa.field("retriever", pa.string()),
        pa.field("chunk_ids", pa.list_(pa.string())),
        pa.field("context_tokens", pa.int32()),
        pa.field("reference_recall", pa.float64()),
    ]
)
"""One reranker's context for an entry's title, and its reference recall."""

ARTICLE_SCORES = ("citation_recall", "citation_precision", "citation_rate", "rouge_l")
MEASURED = ("meteor", "heading_soft_recall", "heading_entity_recall")
"""Scores against the reference that an article may lack (none asked, or no reference
headings): averaged over the articles that have them, x100, and left out when none has."""


def average_articles(
    rows: Sequence[dict[str, Any]], judged: Sequence[str] = ()
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per method and reranker: article counts, mean scores (x100), words and sections, and the
    ``judged`` scores' means on their own scale with how many failed."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["method"], row["retriever"])].append(row)
    out: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for (method, retriever), mine in sorted(groups.items()):
        ok = [r for r in mine if r["status"] == "ok"]
        entry: dict[str, Any] = {"articles": len(ok), "failed": len(mine) - len(ok)}
        for key in ARTICLE_SCORES:  # an article whose citation verdicts failed has none
            values = [r[key] for r in ok if r[key] is not None]
            entry[key] = round(100 * fmean(values), 2) if values else 0.0
        for key in MEASURED:
            values = [r[key] for r in ok if r.get(key) is not None]
            if values:
                entry[key] = round(100 * fmean(values), 2)
        failed = Counter(f["score"] for r in ok for f in r.get("failed_scores") or ())
        if judged:
            entry |= mean_scores(ok, judged)
            entry |= {f"{column(name)}_failed": failed[name] for name in judged}
        if failed["meteor"]:
            entry["meteor_failed"] = failed["meteor"]
        if failed["citation_recall"]:
            entry["citation_failed"] = failed["citation_recall"]
        for key in ("words", "sections"):
            entry[key] = round(fmean(r[key] for r in ok), 1) if ok else 0.0
        out[method][retriever] = entry
    return dict(out)

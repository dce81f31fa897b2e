"""What the ``wikigenbench_rr`` harness task asks its grader and how it scores, without Inspect.

The task gives the model an ``rr_contexts`` row with WikiGenBench's RR prompt
(:func:`.harness.wikigen_rr_messages`) and scores the article it writes as the toolkit's
``wikigen_baselines`` stage scores an RR article, with the same functions:

- ROUGE-L (stemmed) against the row's ``reference``;
- citation recall, precision and rate (:mod:`.wikigen`), each citation of a known document
  judged by the grader with the ``wikigen/entails`` prompt and read by
  :func:`.wikigen.read_entails`; a reply with no verdict leaves the article's three citation
  scores out (``None``, with the reason), as the toolkit does, never counted unsupported;
- the writing and informativeness scores (:mod:`.wikigen_judges`): each judge's prompt with
  :func:`.wikigen_judges.judge_variables`, read by its reader; a judge whose reply holds no
  usable score leaves its scores out (``None``, with the reason), never 0.

The grader is asked for JSON bounded as the readers accept it (:func:`reply_schema`), where its
provider supports structured output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import wikigen_judges as judges
from .leval.metrics import rouge
from .wikigen import Claim, article_claims, citation_scores, entails_variables, read_entails
from .wikigen import EntailsError as EntailsError

CITATION_METRICS = ("citation_recall", "citation_precision", "citation_rate")
METRICS = ("rouge_l", *CITATION_METRICS, *map(judges.column, judges.SCORES))
"""What the task reports per sample and as means: ROUGE-L and the citation scores as fractions,
the judged scores on their own 0-5 or 1-5 scale."""
FEEDBACK_CHARS = 600
"""Most characters of a Prometheus grade's feedback asked as JSON (the score follows it)."""


def feedback_chars(judge_tokens: int) -> int:
    """The feedback's length that leaves a grade of ``judge_tokens`` room for its score: three
    characters a token, less the JSON around it, at most :data:`FEEDBACK_CHARS`."""
    return max(24, min(FEEDBACK_CHARS, 3 * judge_tokens - 40))


def _integer(low: int, high: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high}


def reply_schema(judge: str, feedback_chars: int = FEEDBACK_CHARS) -> dict[str, Any]:
    """The JSON a judge is asked for under structured output, as its reader reads it:
    ``fluency``, ``informativeness`` and ``faithfulness`` (0-5); an outline ``score`` (0-5); a
    Prometheus ``feedback`` of at most ``feedback_chars`` and ``score`` (1-5)."""
    if judge == "fluency":
        names = ("fluency", "informativeness", "faithfulness")
        properties = {n: _integer(*judges.ZERO_TO_FIVE) for n in names}
    elif judge == "outline":
        properties = {"score": _integer(*judges.ZERO_TO_FIVE)}
    else:
        feedback = {"type": "string", "maxLength": feedback_chars}
        properties = {"feedback": feedback, "score": _integer(*judges.ONE_TO_FIVE)}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class Request:
    """One grader call: what it is for, the prompt file and its variables."""

    kind: str
    """``entails``, or the judge's name (``fluency``, ``outline``, a rubric's name)."""
    prompt: str
    variables: dict[str, Any]
    claim: int = -1
    """The claim an entailment request judges (its index in :attr:`Article.claims`); an
    unknown citation (``""``) is never asked and never supports."""


@dataclass
class Article:
    """One written article taken apart over the row's documents."""

    title: str
    text: str
    reference: str
    documents: dict[str, str]
    """Chunk id -> text, in the order shown (document ``n`` is the ``n``-th)."""
    claims: list[Claim] = field(default_factory=list)

    @classmethod
    def of(cls, row: Mapping[str, Any], text: str) -> Article:
        """The article ``text`` written for an ``rr_contexts`` row (stripped, as the toolkit
        keeps a reply)."""
        documents = {d["chunk_id"]: d["text"] for d in sorted(row["documents"], key=_n)}
        text = text.strip()
        return cls(
            row["title"], text, row["reference"], documents, article_claims(text, list(documents))
        )

    def requests(self) -> list[Request]:
        """The entailment of every citation of a shown document, claim by claim in order (as
        the toolkit asks them), then each judge of :data:`.wikigen_judges.SCORES`."""
        out = [
            Request(
                "entails", "wikigen/entails", entails_variables(self.documents[c], claim.text), k
            )
            for k, claim in enumerate(self.claims)
            for c in claim.cited
            if c
        ]
        variables = judges.judge_variables(self.title, self.text)
        for judge in judges.judges(judges.SCORES):
            out.append(Request(judge, judges.prompt_of(judge), variables[judge]))
        return out


def _n(document: Mapping[str, Any]) -> int:
    return int(document["n"])


def verdict(reply: str) -> bool | None:
    """An entailment reply's verdict; ``None`` when it holds none."""
    try:
        return read_entails(reply)
    except EntailsError:
        return None


def score(article: Article, replies: Sequence[str]) -> dict[str, Any]:
    """The article's scores given the grader's ``replies`` to :meth:`Article.requests`, in
    order: ``scores`` (:data:`METRICS`, ``None`` where a judge failed), ``supported`` (per
    claim and citation), ``verdicts`` (per entailment request: true, false or ``None``) and
    ``failed`` (each failed judged score with its reason)."""
    asked = article.requests()
    if len(replies) != len(asked):
        raise ValueError(f"{len(replies)} replies for {len(asked)} requests")
    verdicts: list[bool | None] = []
    judged: dict[str, Any] = {judges.column(s): None for s in judges.SCORES}
    failed: list[dict[str, str]] = []
    for request, reply in zip(asked, replies, strict=True):
        if request.kind == "entails":
            verdicts.append(verdict(reply))
            continue
        try:
            values = judges.read_scores(request.kind, reply)
        except judges.ScoreError as exc:
            names = ["fluency", "info"] if request.kind == "fluency" else [request.kind]
            failed += [{"score": name, "reason": str(exc)} for name in names]
            continue
        judged |= {judges.column(name): value for name, value in values.items()}
    judged_in_order = iter(verdicts)
    supported: list[list[bool | None]] = [
        [next(judged_in_order) if c else False for c in claim.cited] for claim in article.claims
    ]
    cites = citation_scores(article.claims, [[bool(m) for m in marks] for marks in supported])
    citations: dict[str, float | None] = {
        "citation_recall": cites.recall,
        "citation_precision": cites.precision,
        "citation_rate": cites.rate,
    }
    if (missing := sum(v is None for v in verdicts)) > 0:
        why = f"{missing} entailment replies held no verdict"
        failed = [{"score": name, "reason": why} for name in citations] + failed
        citations = dict.fromkeys(citations)
    scores = {
        "rouge_l": rouge(article.text, article.reference, stem=True).rougeL,
        **citations,
        **judged,
    }
    return {"scores": scores, "supported": supported, "verdicts": verdicts, "failed": failed}

"""The review page: a FastAPI app rendering one item at a time from Jinja2 templates, and taking
each decision as a plain HTML form (a few lines of JavaScript only bind keys).

Routes: ``GET /`` (to the first item), ``GET /items/{n}`` and ``POST /items/{n}``, ``n`` a
whole number from 1; nothing else, and no route reads a path: only the loaded items are shown.
A decision is one line appended to ``reviews/<version>.jsonl``; a corrected KPR rule is also
written to ``lveval.kpr.rules_file`` when that setting names a file.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlencode

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from builders.lveval.records import Rule
from pipelines.errors import BenchsmithError
from pipelines.publish.reviews import (
    RULES,
    Review,
    Verdict,
    append_review,
    latest,
    load_reviews,
)
from pipelines.review.items import ReviewItem
from pipelines.synthesis.lveval_rules import set_rules

TEMPLATES = Path(__file__).parent / "templates"


@dataclass
class ReviewSession:
    """What one ``benchsmith review`` serves: the release, its items, where decisions go, and
    the reviewed KPR rules file (None when ``lveval.kpr.rules_file`` is unset)."""

    release: str
    items: list[ReviewItem]
    reviews: Path
    rules_file: Path | None = None
    reviewer: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def decisions(self) -> dict[tuple[str, str, str], Review]:
        """(dataset, item, reviewer) -> the reviewer's latest line on it."""
        found = load_reviews(self.reviews, self.release) or []
        return {(r.dataset, r.item, r.reviewer): r for r in latest(found)}


class FormError(BenchsmithError):
    """A submitted form the page cannot record (answered with 400)."""


def create_app(session: ReviewSession) -> FastAPI:
    """The app serving ``session``."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    env = Environment(
        loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"])
    )

    @app.get("/")
    def first() -> RedirectResponse:
        return RedirectResponse("/items/1", status_code=303)

    @app.get("/items/{number:int}", response_class=HTMLResponse)
    def show(number: int, reviewer: str = "", saved: int = 0) -> HTMLResponse:
        item = _item(session, number)
        name = reviewer.strip() or session.reviewer
        decisions = session.decisions()
        mine = decisions.get((item.dataset, item.item, name)) if name else None
        reviewed = {(d, i) for d, i, who in decisions if not name or who == name}
        page = env.get_template("item.html.j2").render(
            session=session,
            item=item,
            number=number,
            total=len(session.items),
            reviewed=sum((i.dataset, i.item) in reviewed for i in session.items),
            reviewer=name,
            mine=mine,
            saved=bool(saved),
            query=urlencode({"reviewer": name}) if name else "",
            rules_field=RULES,
        )
        return HTMLResponse(page)

    @app.post("/items/{number:int}")
    async def record(number: int, request: Request) -> RedirectResponse:
        item = _item(session, number)
        body = (await request.body()).decode()
        form = {k: v[-1] for k, v in parse_qs(body, keep_blank_values=True).items()}
        try:
            review, rules = decision(session.release, item, form)
        except FormError as exc:
            return HTMLResponse(env.get_template("error.html.j2").render(message=str(exc)), 400)
        with session.lock:
            if rules and session.rules_file is not None:
                set_rules(session.rules_file, rules)
            append_review(session.reviews, review)
        after = min(number + 1, len(session.items))
        query = urlencode(
            {"reviewer": review.reviewer, **({"saved": 1} if after == number else {})}
        )
        return RedirectResponse(f"/items/{after}?{query}", status_code=303)

    return app


def _item(session: ReviewSession, number: int) -> ReviewItem:
    if not 1 <= number <= len(session.items):
        raise HTTPException(404, f"no item {number}: this review has {len(session.items)}")
    return session.items[number - 1]


def decision(release: str, item: ReviewItem, form: dict[str, str]) -> tuple[Review, list[Rule]]:
    """The review line of a submitted form, and the KPR rules it corrects; a form without a
    reviewer name or a decision, or a reject without a reason, is refused."""
    reviewer = form.get("reviewer", "").strip()
    if not reviewer:
        raise FormError("a decision needs the reviewer's name (field 'reviewer'); nothing saved")
    choice = form.get("decision", "")
    if choice not in ("accept", "reject"):
        raise FormError("choose accept or reject (field 'decision'); nothing saved")
    reason = form.get("reason", "").strip()
    if choice == "reject" and not reason:
        raise FormError("a reject needs a reason (field 'reason'); nothing saved")
    fields, rules = {}, []
    for shown in item.fields:
        verdict = form.get(f"verdict.{shown.name}", "correct")
        if verdict not in ("correct", "wrong"):
            raise FormError(f"field {shown.name!r}: the verdict is correct or wrong")
        correction = None
        if shown.correctable:
            correction = _correction(
                form.get(f"correction.{shown.name}", ""), shown.value, shown.many
            )
        if shown.name == RULES:
            changed = {
                orig: new
                for orig, repl in item.rules
                if (new := form.get(f"rule.{orig}", repl).strip()) and new != repl
            }
            correction = changed or None
            rules = [Rule(o, r, item.item) for o, r in changed.items()]
        fields[shown.name] = Verdict("wrong" if correction else verdict, correction)
    at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    review = Review(release, item.dataset, item.config, item.item, reviewer, choice, reason,
                    fields, at)  # fmt: skip
    return review, rules


def _correction(text: str, current: str, many: bool) -> str | list[str] | None:
    """A corrected value: the text when it differs from the current one (a list of its non-empty
    lines for a ``many`` field), else None."""
    text = text.replace("\r\n", "\n").strip()
    if not text or text == current.strip():
        return None
    return [line.strip() for line in text.splitlines() if line.strip()] if many else text


def serve(session: ReviewSession, host: str, port: int) -> None:
    """Serve the review page until interrupted."""
    import uvicorn

    uvicorn.run(create_app(session), host=host, port=port, log_level="warning")

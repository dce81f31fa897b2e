"""The review server's refusals: no write without a reviewer, no file outside the release; and a
corrected KPR rule written where lveval.kpr.rules_file reads it."""

from __future__ import annotations

import html
import http.client
import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from builders.lveval.kpr import parse_rules
from pipelines.publish.reviews import read_reviews, reviews_path
from pipelines.review import ReviewSession, load_items
from tests.support.review_server import review_server


@pytest.fixture()
def session(hub_export: Path, tmp_path: Path) -> ReviewSession:
    version, items = load_items(hub_export, ["lveval"])
    rules = tmp_path / "rules.jsonl"
    rules.write_text('{"orig": "Valdra", "repl": "Nolvar", "scope": "*"}\n')
    return ReviewSession(version, items, reviews_path(tmp_path / "reviews", version), rules)


def post(url: str, form: dict[str, str]) -> tuple[int, str]:
    data = urllib.parse.urlencode(form).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data)) as answer:
            return answer.status, html.unescape(answer.read().decode())
    except urllib.error.HTTPError as exc:
        return exc.code, html.unescape(exc.read().decode())


def raw_get(url: str, path: str) -> tuple[int, str]:
    """GET ``path`` exactly as written (no client-side normalising of ``..``)."""
    host = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(host.hostname, host.port, timeout=5)
    connection.putrequest("GET", path, skip_accept_encoding=True)
    connection.endheaders()
    answer = connection.getresponse()
    return answer.status, answer.read().decode(errors="replace")


def test_a_write_without_a_reviewer_is_refused(session: ReviewSession):
    with review_server(session) as url:
        status, body = post(f"{url}/items/1", {"reviewer": " ", "decision": "accept"})
        assert status == 400 and "needs the reviewer's name" in body
        status, body = post(f"{url}/items/1", {"reviewer": "ana", "decision": "reject"})
        assert status == 400 and "a reject needs a reason" in body
    assert not session.reviews.exists()


def test_no_request_reaches_a_file_outside_the_release(session: ReviewSession, hub_export):
    secret = (hub_export / "lveval" / "release.json").read_text()[:40]
    attempts = ["/items/../release.json", "/../../etc/passwd", "/items/..%2F..%2Frelease.json",
                "/items/1/../../lveval/release.json", "/static/release.json", "/items/0",
                f"/items/{len(session.items) + 1}", "/docs", "/openapi.json"]  # fmt: skip
    with review_server(session) as url:
        for path in attempts:
            status, body = raw_get(url, path)
            assert status == 404, path
            assert secret not in body and "root:" not in body
        status, body = raw_get(url, "/items/1")
        assert status == 200 and f"Item 1 of {len(session.items)}, 0 reviewed" in body


def test_a_corrected_rule_goes_to_the_rules_file_and_the_reviews_line(session: ReviewSession):
    number, item = next((n, i) for n, i in enumerate(session.items, 1) if i.rules)
    orig = item.rules[0][0]
    form = {"reviewer": "ana", "decision": "accept", f"rule.{orig}": "Quenmoral"}
    with review_server(session) as url:
        status, body = post(f"{url}/items/{number}", form)
        assert status == 200 and "1 reviewed" in body  # redirected to the next item
    rules = parse_rules(session.rules_file.read_text().splitlines(), "rules")
    assert [(r.orig, r.repl, r.scope) for r in rules] == [
        ("Valdra", "Nolvar", "*"),  # the rules already there are kept
        (orig, "Quenmoral", item.item),
    ]
    (line,) = read_reviews(session.reviews, session.release)
    assert line.fields["replacement_rules"].correction == {orig: "Quenmoral"}
    assert line.fields["replacement_rules"].verdict == "wrong"
    assert json.loads(session.reviews.read_text())["item"] == item.item

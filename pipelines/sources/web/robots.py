"""robots.txt rules, fetched once per host and checked with our own User-Agent (RFC 9309)."""

from __future__ import annotations

from urllib.robotparser import RobotFileParser


def parse_robots(status: int | None, body: str) -> RobotFileParser:
    """Build the rules for a host from its ``/robots.txt`` answer.

    RFC 9309: a 4xx answer means no rules (everything allowed); a 5xx answer or an unreachable
    server means everything is disallowed until it can be read.
    """
    rules = RobotFileParser()
    if status is not None and 200 <= status < 300:
        rules.parse(body.splitlines())
    elif status is not None and 400 <= status < 500:
        rules.allow_all = True
    else:
        rules.disallow_all = True
    return rules


def allowed(rules: RobotFileParser, agent: str, url: str) -> bool:
    """Whether ``agent`` may fetch ``url`` under ``rules``."""
    return rules.can_fetch(agent, url)

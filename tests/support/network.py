"""A socket guard: inside ``no_network()`` any attempt to open a connection fails the test."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest


class NetworkUsed(AssertionError):
    """Raised when code under test tries to connect anywhere."""


def _host(target: object) -> object:
    """The host of a connect address (``(host, port, ...)``) or a lookup's host name."""
    return target[0] if isinstance(target, tuple) and target else target


@contextmanager
def no_network(allow: Iterable[str] = ()) -> Iterator[list[object]]:
    """Refuse every socket connect and DNS lookup, except to the hosts in ``allow`` (such as
    ``"127.0.0.1"``, where a test's own server runs); yield the list of refused attempts."""
    attempts: list[object] = []
    allowed = set(allow)
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def guard(real: Callable[..., Any], is_method: bool) -> Callable[..., Any]:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            target = args[1] if is_method and len(args) > 1 else (args[0] if args else None)
            if allowed and _host(target) in allowed:
                return real(*args, **kwargs)
            attempts.append(args[1:] if len(args) > 1 else args)
            raise NetworkUsed(f"network used: {args[1:]!r}")

        return refuse

    mp = pytest.MonkeyPatch()
    mp.setattr(socket.socket, "connect", guard(real_connect, True))
    mp.setattr(socket.socket, "connect_ex", guard(real_connect_ex, True))
    mp.setattr(socket, "getaddrinfo", guard(real_getaddrinfo, False))
    mp.setattr(socket, "create_connection", guard(socket.create_connection, False))
    try:
        yield attempts
    finally:
        mp.undo()
        assert socket.socket.connect is real_connect and socket.socket.connect_ex is real_connect_ex
        assert socket.getaddrinfo is real_getaddrinfo


def loopback_fetch(target: str = "127.0.0.1", **overrides: Any) -> Any:
    """Fetch settings for tests: fast timeouts, no per-host delay, every ``*.example`` host sent
    to ``target`` (an address, optionally with a port) on loopback; ``overrides`` on top."""
    from pipelines.sources.web.settings import FetchSettings

    given = {"contact": "ops@benchsmith.example", "per_host_delay_s": 0, "read_timeout_s": 2.0,
             "total_timeout_s": 4.0, "retries": 2, "backoff_s": 0.01,
             "allow_addresses": ["127.0.0.1/32"], "resolve": {"*.example": target}}  # fmt: skip
    return FetchSettings(**{**given, **overrides})

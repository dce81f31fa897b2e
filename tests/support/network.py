"""A socket guard: inside ``no_network()`` any attempt to open a connection fails the test."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


class NetworkUsed(AssertionError):
    """Raised when code under test tries to connect anywhere."""


@contextmanager
def no_network() -> Iterator[list[object]]:
    """Refuse every socket connect and DNS lookup; yield the list of attempts."""
    attempts: list[object] = []
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args[1:] if len(args) > 1 else args)
        raise NetworkUsed(f"network used: {args[1:]!r}")

    mp = pytest.MonkeyPatch()
    mp.setattr(socket.socket, "connect", refuse)
    mp.setattr(socket.socket, "connect_ex", refuse)
    mp.setattr(socket, "getaddrinfo", refuse)
    mp.setattr(socket, "create_connection", refuse)
    try:
        yield attempts
    finally:
        mp.undo()
        assert socket.socket.connect is real_connect and socket.socket.connect_ex is real_connect_ex
        assert socket.getaddrinfo is real_getaddrinfo

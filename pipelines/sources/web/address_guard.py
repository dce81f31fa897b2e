"""SSRF guard: every TCP connection the fetcher opens goes to a checked, global address.

Hosts are resolved here (or mapped by ``resolve`` settings, as the snapshot recorder maps its
``.example`` hosts to 127.0.0.1) and each address is refused unless it is globally routable or
explicitly allow-listed. Loopback, private, link-local, CGNAT (100.64/10), unique-local IPv6 and
IPv6 forms of those (IPv4-mapped, 6to4, Teredo, NAT64, IPv4-compatible) are all non-global. The
connection is made to the address that was checked, so a DNS answer cannot change between the
check and the connect. A host spelling an IPv4 address in another form (octal, hex, short:
``0177.0.0.1``, ``127.1``) is read as that address, as browsers read it, never sent to DNS.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import re
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlunsplit

import anyio
import httpcore

from pipelines.errors import BenchsmithError
from pipelines.sources.web.urls import DEFAULT_PORTS, split_url


class BlockedAddressError(BenchsmithError):
    """A host resolved to an address the fetcher must not connect to."""


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_LOW_32_BITS = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("::/96"))


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address a 6to4, Teredo (client), NAT64 or IPv4-compatible IPv6 one carries."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if any(address in net for net in _LOW_32_BITS):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


_IPV4_PART = re.compile(r"0[xX](?P<hex>[0-9a-fA-F]*)|0(?P<oct>[0-7]+)|(?P<dec>[1-9][0-9]*|0)")


def ipv4_literal(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address ``host`` spells in any of the number forms browsers and ``inet_aton``
    accept (the WHATWG URL Standard's IPv4 parser): one to four dot-separated parts, each
    decimal, octal (a leading ``0``) or hex (``0x``), the last filling the remaining bytes, as in
    ``0177.0.0.1``, ``127.0.0.01``, ``127.1``, ``0x7f.1`` or ``2130706433``; None if it is none.
    """
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":  # a trailing dot
        parts.pop()
    matches = [_IPV4_PART.fullmatch(part) for part in parts]
    if not 1 <= len(parts) <= 4 or not all(matches):
        return None
    numbers = [_ipv4_number(m) for m in matches if m is not None]
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    return ipaddress.IPv4Address(sum(n << 8 * (3 - i) for i, n in enumerate(head)) + last)


def _ipv4_number(part: re.Match[str]) -> int:
    if part["hex"] is not None:
        return int(part["hex"] or "0", 16)  # a bare "0x" is 0
    return int(part["oct"], 8) if part["oct"] else int(part["dec"])


def parse_network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """An ``allow`` entry: an address or network (``127.0.0.1``, ``10.0.0.0/8``; host bits may
    be set). ValueError if it is neither (a host name such as ``localhost`` is not accepted)."""
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise ValueError(
            f"{text!r} is not an IP address or network (write e.g. '127.0.0.1/32' or '::1/128')"
        ) from None


def parse_target(target: str) -> tuple[str, int | None]:
    """A ``resolve`` target: an IPv4 address with an optional ``:port`` (``127.0.0.1:8443``) or
    a bare IPv6 address (``::1``, which takes no port). ValueError otherwise."""
    address, _, port = target.rpartition(":") if target.count(":") == 1 else (target, "", "")
    try:
        ipaddress.ip_address(address)
    except ValueError:
        raise ValueError(
            f"{target!r} is not an IP address with an optional port (write e.g. '127.0.0.1', "
            "'127.0.0.1:8443' or '::1'; an IPv6 address takes no port)"
        ) from None
    if not port:
        return address, None
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        raise ValueError(f"{target!r}: the port must be a number from 1 to 65535")
    return address, int(port)


def _resolved(host: str, port: int) -> list[str]:
    """The addresses DNS gives for ``host``, in its order, without repeats."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:  # httpcore's error, so the fetcher reports it
        raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class AddressPolicy:
    """Which addresses may be reached, and how host names resolve.

    ``allow`` holds networks (``127.0.0.1/32``, ``10.0.0.0/8``) that are reachable although not
    global. ``resolve`` maps host name patterns (``*.example``) to fixed addresses, optionally
    with a port (``127.0.0.1:8443``) that replaces the URL's port.
    """

    def __init__(self, allow: Iterable[str] = (), resolve: dict[str, str] | None = None):
        self.allow = [parse_network(net) for net in allow]
        self.resolve_map = dict(resolve or {})

    def permitted(self, address: IPAddress) -> bool:
        """Whether ``address`` may be connected to.

        An IPv6 address that embeds an IPv4 one is refused unless that one is permitted too.
        """
        mapped = getattr(address, "ipv4_mapped", None)
        plain = mapped or address
        if any(plain in net for net in self.allow):
            return True
        embedded = embedded_ipv4(plain)
        if embedded is not None and not self.permitted(embedded):
            return False
        return plain.is_global and not plain.is_multicast

    def addresses(self, host: str, port: int) -> list[tuple[str, int]]:
        """Resolve ``host`` to permitted ``(address, port)`` pairs; raise if none is permitted."""
        for pattern, target in self.resolve_map.items():
            if fnmatch.fnmatch(host.lower(), pattern.lower()):
                address, mapped_port = parse_target(target)
                candidates = [address]
                port = mapped_port or port
                break
        else:
            literal = ipv4_literal(host)  # any spelling of an address, not the resolver's reading
            candidates = [str(literal)] if literal is not None else _resolved(host, port)
        allowed = [(a, port) for a in candidates if self.permitted(ipaddress.ip_address(a))]
        if not allowed:
            raise BlockedAddressError(
                f"{host} resolves to {', '.join(candidates)}, which is not a global address "
                "(allow it with web.fetch.allow_addresses)"
            )
        return allowed

    def dotted_quad(self, url: str) -> str:
        """``url`` with an IPv4 host in another spelling (``0177.0.0.1``, ``127.1``, ``0x7f.1``,
        ``2130706433``: what browsers and resolvers read as 127.0.0.1) written as the address it
        means, once that address is permitted; a :class:`BlockedAddressError` otherwise. Any
        other ``url`` comes back as it is."""
        parts, port = split_url(url)
        host = parts.hostname or ""
        address = ipv4_literal(host)
        if address is None or str(address) == host:
            return url
        self.addresses(host, port or DEFAULT_PORTS.get(parts.scheme, 80))
        userinfo, at, _ = parts.netloc.rpartition("@")
        netloc = f"{userinfo}{at}{address}" + (f":{port}" if port is not None else "")
        return urlunsplit(parts._replace(netloc=netloc))


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that connects only to addresses the policy permits."""

    def __init__(self, policy: AddressPolicy, inner: httpcore.AsyncNetworkBackend | None = None):
        self.policy = policy
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await anyio.to_thread.run_sync(self.policy.addresses, host, port)
        last: Exception | None = None
        for address, target_port in addresses:
            try:
                return await self.inner.connect_tcp(
                    address,
                    target_port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        raise BlockedAddressError("unix sockets are never fetched")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)

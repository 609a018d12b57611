"""Which network addresses `web_fetch` may connect to: public ones only, unless configured.

Owns: classifying an IP address (metadata, loopback, link-local, private, unspecified, multicast,
other non-public), unwrapping IPv4 addresses embedded in IPv6 forms (IPv4-mapped `::ffff:a.b.c.d`,
IPv4-compatible `::a.b.c.d`, 6to4 `2002::/16`, NAT64 `64:ff9b::/96`, Teredo), the allowlist
(`private_address_allowlist`: `127.0.0.1`, `127.0.0.1:8080`, `[::1]:8080`, `10.0.0.0/8`), and
`AddressPolicy.vet` — resolve a host and check *every* address it resolves to. Does not own URL
syntax (urls.py) or connecting (fetch_http.py, which connects only to the addresses `vet`
returned, so a second DNS answer cannot swap in a private address between check and connect).

A host is refused when any one of its addresses is refused: a name that resolves to both a public
and a private address is treated as private. The resolver is injectable (tests, split-horizon
setups); the default is the event loop's `getaddrinfo`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from .errors import WEB_BLOCKED_URL, WEB_PROVIDER_ERROR, WebError

__all__ = [
    "AddressPolicy",
    "AllowEntry",
    "IPAddress",
    "Resolver",
    "embedded_ipv4",
    "non_public_kind",
    "parse_allow_entry",
    "parse_ip",
    "system_resolver",
]

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver: TypeAlias = Callable[[str, int], Awaitable[Sequence[str]]]
"""`await resolver(host, port)` -> the IP address strings `host` resolves to."""

_METADATA: Final = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, DigitalOcean, OpenStack instance metadata
        "169.254.170.2",  # AWS ECS task metadata
        "168.63.129.16",  # Azure wireserver (a public address used as a host-local endpoint)
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud
        "fd00:ec2::254",  # AWS over IPv6
    )
)
_NAT64: Final = ipaddress.ip_network("64:ff9b::/96")
_HINT: Final = "set allow_private_hosts or private_address_allowlist in the web-fetch-http config"


def parse_ip(text: str) -> IPAddress | None:
    """`text` as an IP address (IPv6 with or without brackets, with a zone), else None."""
    candidate = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        return ipaddress.ip_address(candidate)
    except ValueError:
        return None


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries (mapped, compatible, 6to4, NAT64, Teredo client)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    packed = int(address)
    if address in _NAT64:
        return ipaddress.IPv4Address(packed & 0xFFFFFFFF)
    if 1 < packed < 2**32:  # IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks)
        return ipaddress.IPv4Address(packed)
    return None


def non_public_kind(address: IPAddress) -> str | None:
    """Why `address` is not a public unicast address (`"loopback"`, ...), or None if it is."""
    if address in _METADATA:
        return "cloud metadata"
    if isinstance(address, ipaddress.IPv6Address):
        inner = embedded_ipv4(address)
        if inner is not None:
            kind = non_public_kind(inner)
            return None if kind is None else f"{kind}, embedded in an IPv6 address"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_unspecified:
        return "unspecified"
    if address.is_multicast:
        return "multicast"
    if address.is_private:
        return "private"
    if not address.is_global:
        return "non-public"
    return None


@dataclass(frozen=True, slots=True)
class AllowEntry:
    """An allowlisted network, on one port or (port None) on every port."""

    network: ipaddress.IPv4Network | ipaddress.IPv6Network
    port: int | None

    def permits(self, address: IPAddress, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if address.version == self.network.version and address in self.network:
            return True
        inner = embedded_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else None
        return inner is not None and inner.version == self.network.version and inner in self.network


def parse_allow_entry(text: str) -> AllowEntry:
    """`127.0.0.1`, `127.0.0.1:8080`, `::1`, `[::1]:8080` or a CIDR network (every port).

    Raises ValueError naming the accepted forms.
    """
    entry = text.strip()
    port: int | None = None
    host = entry
    if entry.startswith("["):
        end = entry.find("]")
        rest = entry[end + 1 :] if end > 0 else ""
        if end < 0 or (rest and not rest.startswith(":")):
            raise ValueError(_bad_entry(text))
        host = entry[1:end]
        port = _port(rest[1:], text) if rest else None
    elif entry.count(":") == 1:
        host, _, digits = entry.partition(":")
        port = _port(digits, text)
    try:
        network = ipaddress.ip_network(host, strict=False)
    except ValueError:
        raise ValueError(_bad_entry(text)) from None
    return AllowEntry(network, port)


def _port(digits: str, text: str) -> int:
    if not digits.isdigit() or not 0 < int(digits) < 65536:
        raise ValueError(_bad_entry(text))
    return int(digits)


def _bad_entry(text: str) -> str:
    return (
        f"{text!r} is not an allowlist entry; use an IP address (127.0.0.1, ::1), an address "
        "and port (127.0.0.1:8080, [::1]:8080) or a network (10.0.0.0/8)"
    )


async def system_resolver(host: str, port: int) -> list[str]:
    """Resolve with the running loop's `getaddrinfo` (TCP), de-duplicated, in answer order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: dict[str, None] = {}
    for info in infos:
        seen.setdefault(str(info[4][0]), None)
    return list(seen)


class AddressPolicy:
    """Public addresses only, unless `allow_private` or an allowlist entry permits one."""

    __slots__ = ("_allow", "_allow_private", "_resolver")

    def __init__(
        self,
        *,
        allow_private: bool = False,
        allowlist: Iterable[str] = (),
        resolver: Resolver = system_resolver,
    ) -> None:
        self._allow_private = allow_private
        self._allow = tuple(parse_allow_entry(entry) for entry in allowlist)
        self._resolver = resolver

    @property
    def checks_addresses(self) -> bool:
        """False when every address is allowed (then hosts need not be resolved up front)."""
        return not self._allow_private

    def refusal(self, host: str, address: IPAddress, port: int) -> WebError | None:
        """The `WEB_BLOCKED_URL` error for connecting to `address` for `host`, or None."""
        if self._allow_private:
            return None
        kind = non_public_kind(address)
        if kind is None or any(entry.permits(address, port) for entry in self._allow):
            return None
        shown = host if parse_ip(host) == address else f"{host} ({address})"
        return WebError(
            f"refusing to fetch {shown}: not a public address ({kind}); {_HINT} to allow it",
            WEB_BLOCKED_URL,
        )

    def check_literal(self, host: str, port: int) -> None:
        """Refuse a URL whose host is a literal non-public IP, without any network access."""
        address = parse_ip(host)
        if address is not None and (error := self.refusal(host, address, port)) is not None:
            raise error

    async def vet(self, host: str, port: int) -> list[str]:
        """The addresses to connect to for `host:port`, every one of them allowed.

        Raises `WebError`: `WEB_BLOCKED_URL` when any address is refused, `WEB_PROVIDER_ERROR`
        when the name does not resolve. Cancellation propagates (the caller owns it).
        """
        literal = parse_ip(host)
        if literal is not None:
            addresses: Sequence[str] = [str(literal)]
        else:
            try:
                addresses = await self._resolver(host, port)
            except OSError as error:
                raise WebError(
                    f"web fetch failed: cannot resolve {host}: {error}", WEB_PROVIDER_ERROR
                ) from error
            if not addresses:
                raise WebError(
                    f"web fetch failed: cannot resolve {host}: no addresses", WEB_PROVIDER_ERROR
                )
        for text in addresses:
            address = parse_ip(text)
            if address is None:
                raise WebError(
                    f"web fetch failed: resolver returned {text!r} for {host}", WEB_PROVIDER_ERROR
                )
            if (refused := self.refusal(host, address, port)) is not None:
                raise refused
        return [str(parse_ip(text)) for text in addresses]

"""Private-address refusal: `web_fetch` connects only to public addresses unless configured.

Contract: by default a URL is refused (`WEB_BLOCKED_URL`) when its host is, or resolves to, any
loopback, private, link-local, cloud-metadata, unspecified, multicast or otherwise non-public
address — IPv4, IPv6, and IPv4 embedded in IPv6 forms alike; every resolved address is checked,
and the connection goes only to a checked address. `allow_private_hosts` lifts the rule;
`private_address_allowlist` lifts it for listed addresses (optionally one port).

Only loopback forms are used against the provider (a broken check would reach a local canary
server, never another host); other ranges are checked at the policy level, without networking.
"""

from __future__ import annotations

import ipaddress

import pytest

from tether.core.signals import AbortController
from tether.plugins.web.addresses import AddressPolicy, non_public_kind, parse_allow_entry
from tether.plugins.web.errors import WebError
from tether.plugins.web.vocabulary import WebFetchRequest

from .conftest import MakeProvider, respond_with
from .servers import LocalServer

HINT = "set allow_private_hosts or private_address_allowlist in the web-fetch-http config"


async def refused(provider: object, url: str) -> WebError:
    with pytest.raises(WebError) as caught:
        await provider.fetch(  # type: ignore[attr-defined]
            WebFetchRequest(url), signal=AbortController().signal
        )
    assert caught.value.code == "WEB_BLOCKED_URL", caught.value
    return caught.value


# -- the provider, by default -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "shown", "kind"),
    [("127.0.0.1", "127.0.0.1", "loopback"),
     ("127.9.9.9", "127.9.9.9", "loopback"),
     ("0.0.0.0", "0.0.0.0", "unspecified"),
     ("[::1]", "::1", "loopback"),
     ("[::ffff:127.0.0.1]", "::ffff:127.0.0.1", "loopback, embedded in an IPv6 address"),
     ("[::ffff:7f00:1]", "::ffff:7f00:1", "loopback, embedded in an IPv6 address")],
)  # fmt: skip
async def test_literal_loopback_addresses_are_refused_by_default(
    make_provider: MakeProvider, host: str, shown: str, kind: str
) -> None:
    async with LocalServer() as canary:
        error = await refused(
            make_provider(private_address_allowlist=[]), f"http://{host}:{canary.port}/"
        )
        assert (
            error.message
            == f"refusing to fetch {shown}: not a public address ({kind}); {HINT} to allow it"
        )
        assert canary.connections == 0


@pytest.mark.parametrize("host", ["localhost", "2130706433", "127.1", "0x7f.0.0.1"])
async def test_host_names_and_numeric_forms_that_resolve_to_loopback_are_refused(
    make_provider: MakeProvider, host: str
) -> None:
    async with LocalServer() as canary:
        error = await refused(
            make_provider(private_address_allowlist=[]), f"http://{host}:{canary.port}/"
        )
        assert error.message.startswith(f"refusing to fetch {host} (")
        assert canary.connections == 0


async def test_a_name_resolving_to_a_public_and_a_private_address_is_refused(
    make_provider: MakeProvider,
) -> None:
    async def split_horizon(host: str, port: int) -> list[str]:
        return ["93.184.215.14", "10.0.0.7"]

    error = await refused(make_provider(split_horizon), "http://intranet.test/")
    assert error.message.startswith(
        "refusing to fetch intranet.test (10.0.0.7): not a public address (private)"
    )


@pytest.mark.parametrize(
    ("answer", "kind"),
    [("169.254.169.254", "cloud metadata"),
     ("fd00:ec2::254", "cloud metadata"),
     ("fe80::1", "link-local"),
     ("::ffff:10.1.2.3", "private, embedded in an IPv6 address"),
     ("2002:a00:1::", "private, embedded in an IPv6 address"),
     ("64:ff9b::a9fe:a9fe", "cloud metadata, embedded in an IPv6 address")],
)  # fmt: skip
async def test_a_name_resolving_to_a_private_ipv6_or_metadata_address_is_refused(
    make_provider: MakeProvider, answer: str, kind: str
) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return [answer]

    error = await refused(make_provider(resolver), "http://internal.test/")
    shown = str(ipaddress.ip_address(answer))
    assert error.message == (
        f"refusing to fetch internal.test ({shown}): not a public address ({kind});"
        f" {HINT} to allow it"
    )


# -- what configuration allows ------------------------------------------------------------------


async def test_an_allowlisted_address_and_port_is_fetched_through_a_resolved_name(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        assert host == "docs.internal"
        return ["127.0.0.1"]

    respond_with(server, "/", 200, {"content-type": "text/plain"}, b"hello")
    provider = make_provider(resolver)
    result = await provider.fetch(
        WebFetchRequest(f"http://docs.internal:{server.port}/"), signal=AbortController().signal
    )
    assert (result.url, result.body.content) == (f"http://docs.internal:{server.port}/", "hello")
    assert server.exchanges[-1].request.headers["host"] == f"docs.internal:{server.port}"


async def test_an_allowlist_entry_with_a_port_does_not_allow_other_ports(
    make_provider: MakeProvider, server: LocalServer
) -> None:
    async with LocalServer() as canary:
        await refused(make_provider(), canary.url("/"))
        assert canary.connections == 0


async def test_allow_private_hosts_allows_loopback(make_provider: MakeProvider) -> None:
    async with LocalServer() as local:
        respond_with(local, "/", 200, {"content-type": "text/plain"}, b"local")
        provider = make_provider(allow_private_hosts=True, private_address_allowlist=[])
        result = await provider.fetch(
            WebFetchRequest(local.url("/", host="localhost")), signal=AbortController().signal
        )
        assert result.body.content == "local"


# -- the policy, without networking -------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    ["10.0.0.1", "172.16.5.4", "192.168.1.1", "100.64.0.1", "169.254.0.9", "224.0.0.1",
     "240.0.0.1", "255.255.255.255", "198.18.0.1", "192.0.2.1", "168.63.129.16",
     "100.100.100.200", "fc00::1", "fe80::1%eth0", "ff02::1", "2001:db8::1", "::",
     "::127.0.0.1", "2001:0:4136:e378:8000:63bf:3fff:fdd2"],
)  # fmt: skip
def test_non_public_addresses_are_classified_as_such(address: str) -> None:
    assert non_public_kind(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize(
    "address", ["93.184.215.14", "1.1.1.1", "2606:4700::1111", "::ffff:1.1.1.1", "2002:101:101::"]
)
def test_public_addresses_are_not_refused(address: str) -> None:
    assert non_public_kind(ipaddress.ip_address(address)) is None


async def test_the_policy_checks_every_resolved_address() -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return ["1.1.1.1", "::1"]

    with pytest.raises(WebError) as caught:
        await AddressPolicy(resolver=resolver).vet("mixed.test", 80)
    assert caught.value.message.startswith("refusing to fetch mixed.test (::1)")


async def test_an_unresolvable_name_is_a_provider_error() -> None:
    async def resolver(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    with pytest.raises(WebError) as caught:
        await AddressPolicy(resolver=resolver).vet("nowhere.test", 80)
    assert (caught.value.code, caught.value.message) == (
        "WEB_PROVIDER_ERROR",
        "web fetch failed: cannot resolve nowhere.test: Name or service not known",
    )


@pytest.mark.parametrize(
    ("entry", "allowed", "denied"),
    [("127.0.0.1", ("127.0.0.1", 1), ("127.0.0.2", 1)),
     ("127.0.0.1:8080", ("127.0.0.1", 8080), ("127.0.0.1", 8081)),
     ("[::1]:8080", ("::1", 8080), ("::1", 80)),
     ("10.0.0.0/8", ("10.9.8.7", 443), ("11.0.0.1", 443))],
)  # fmt: skip
def test_allowlist_entries_permit_their_address_and_port_only(
    entry: str, allowed: tuple[str, int], denied: tuple[str, int]
) -> None:
    parsed = parse_allow_entry(entry)
    assert parsed.permits(ipaddress.ip_address(allowed[0]), allowed[1])
    assert not parsed.permits(ipaddress.ip_address(denied[0]), denied[1])


@pytest.mark.parametrize("entry", ["localhost", "127.0.0.1:0", "[::1", "10.0.0.0/99", "1.2.3.4:x"])
def test_a_malformed_allowlist_entry_is_a_config_error_naming_the_forms(entry: str) -> None:
    with pytest.raises(ValueError, match="is not an allowlist entry; use an IP address"):
        parse_allow_entry(entry)

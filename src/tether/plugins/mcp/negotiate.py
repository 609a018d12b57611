"""Which protocol revision a session speaks: the newest one both sides have.

Owns `negotiate(session)`. The stateless 2026-07-28 revision is reached with `server/discover`
(the SDK's public `ClientSession.discover`, which retries once at a modern version the server
names in a `-32022`), the older ones with the `initialize` handshake (`ClientSession.initialize`,
which offers 2025-11-25 and accepts what the server counters with down to 2024-11-05). The policy
is the SDK's own `Client(mode="auto")`, written here on the session's public methods (the SDK
keeps its copy in a private module): anything that is not positive evidence of a 2026 server
falls back to `initialize` — a JSON-RPC error (a 2025 server's "Method not found", an HTTP 4xx
the transport turned into one, a probe that timed out), or a discover result naming no revision
this client speaks — or no answer within `probe_s` (a server from before 2026 that drops a
request it does not know; the SDK's own bound is 10 s, as long as a whole start-up). Two answers
end the negotiation instead:

- `-32022` naming only 2026-era revisions, none of them ours: the server cannot be spoken to
  (raised as is);
- `-32022` from the `initialize` fallback (the server took a probe that timed out here, say
  while it was still starting, as the start of a 2026 connection): one more `discover`, at a
  revision it named.

Anything else (a connection error) propagates: an outage is no verdict on the revision. After it
returns, `session.protocol_version` is the revision; on 2026-07-28 the SDK stamps every request
with its `_meta` envelope and, over HTTP, the `MCP-Protocol-Version`, `Mcp-Method` (and
`Mcp-Name`) headers. Imports the `mcp` SDK: load it lazily.
"""

from __future__ import annotations

import asyncio

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

__all__ = ["is_modern", "negotiate"]


def is_modern(session: ClientSession) -> bool:
    """Whether `session` speaks a stateless (2026-07-28 or later) revision."""
    return session.protocol_version in MODERN_PROTOCOL_VERSIONS


async def negotiate(session: ClientSession, *, probe_s: float) -> None:
    """Settle `session`'s revision (see the module note); raises when there is none."""
    if await _discovered(session, probe_s):
        return
    try:
        await session.initialize()
    except MCPError as exc:
        if exc.code != types.UNSUPPORTED_PROTOCOL_VERSION or not _modern_named(exc):
            raise
        await session.discover()


async def _discovered(session: ClientSession, probe_s: float) -> bool:
    """Whether `server/discover` settled a 2026 revision (False: fall back to `initialize`)."""
    try:
        async with asyncio.timeout(probe_s):
            await session.discover()
    except TimeoutError:
        return False  # our own wait ended; the request is not cancelled (the spec forbids it)
    except MCPError as exc:
        if exc.code == types.UNSUPPORTED_PROTOCOL_VERSION:
            supported = _supported(exc)
            if supported is not None and not any(
                v in HANDSHAKE_PROTOCOL_VERSIONS for v in supported
            ):
                raise  # a 2026-only server that shares no revision with us
        return False
    except (RuntimeError, ValidationError):
        return False  # a discover result naming no revision we speak, or not a result at all
    return True


def _supported(exc: MCPError) -> list[str] | None:
    try:
        return types.UnsupportedProtocolVersionErrorData.model_validate(exc.error.data).supported
    except ValidationError:
        return None


def _modern_named(exc: MCPError) -> bool:
    return any(v in MODERN_PROTOCOL_VERSIONS for v in _supported(exc) or ())

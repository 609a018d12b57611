"""The transport seam: one method that turns an `LlmRequest` into a stream of chunks.

Owns: `LlmRequest` (what the loop asks a model) and the `LlmTransport` protocol an adapter
implements. Does not own failure normalisation, retries or assembly (`tether.agent.llm.service`),
nor any wire format (`tether.agent.llm.openai`).

The contract an adapter keeps:
  * `stream(request, signal=...)` is an async generator (it has `aclose()`); nothing happens until
    it is iterated, and closing it releases the connection.
  * It yields chunks in the spec §1.5 order (`block-start`, deltas, `block-end` per block, then
    `usage`, then exactly one `finish`) and nothing after the finish.
  * It raises `LlmError` for every failure, with `code == "ABORTED"` when `signal` aborted the
    request; it never swallows a `CancelledError` it did not cause.
  * When `signal` aborts it stops its I/O promptly (closes the HTTP stream), then raises.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ...core.signals import AbortSignal
from ..messages import Message, StreamChunk

__all__ = ["LlmRequest", "LlmTransport"]


@dataclass(frozen=True, kw_only=True)
class LlmRequest:
    """One model call. Unset options (None / empty) are left out of the wire request.

    `tools` are `{"name", "description", "parameters"}` mappings (what `ctx.tools.schemas()`
    returns). `model` overrides the route's model; `max_tokens` the route's default.
    """

    messages: Sequence[Message]
    system: str | None = None
    tools: Sequence[Mapping[str, object]] = ()
    model: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    stop: Sequence[str] = ()
    reasoning_effort: str | None = None
    session_id: str | None = None
    purpose: str | None = None
    extra_body: Mapping[str, object] = field(default_factory=dict)


class LlmTransport(Protocol):
    """Streams one model response. See the module docstring for the contract."""

    def stream(
        self, request: LlmRequest, *, signal: AbortSignal
    ) -> AsyncGenerator[StreamChunk, None]: ...

    async def aclose(self) -> None:
        """Release pooled connections; the transport is not used afterwards."""
        ...

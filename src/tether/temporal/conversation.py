"""The conversation a model step reads, by reference: sealed segments in the payload store plus
an inline tail (`Conversation`), so what the workflow sends each model step stays small however
long the session grows — and so does what continue-as-new carries.

Owns, on the activity side: reading a conversation (`load`: every entry, segments first, in
order, each segment fetched once per worker while the blob cache keeps it) and keeping it small
(`seal`: a tail over `SEAL_BYTES` or `SEAL_ENTRIES` becomes one segment; more than `FOLD`
segments become one segment that lists them). A segment is the JSON `{"entries": [...]}` or
`{"segments": [refs]}`; both are content-addressed, so sealing again after a retried step
writes nothing new.

The workflow only keeps and forwards `Conversation` values and appends to the tail; it never
reads a segment (no I/O in a workflow).
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from .blobs import (
    BlobStore,
    encoded_size,
    entry_from_json,
    entry_to_json,
    ref_from_json,
    ref_to_json,
)
from .payloads import BlobRef, Conversation, LogEntry

__all__ = ["FOLD", "SEAL_BYTES", "SEAL_ENTRIES", "load", "seal"]

SEAL_BYTES: Final = 64 * 1024
SEAL_ENTRIES: Final = 200
FOLD: Final = 32


async def load(blobs: BlobStore, conversation: Conversation) -> list[LogEntry]:
    """Every entry of `conversation`, in order (refs inside entries are not resolved)."""
    parts = await asyncio.gather(*(_segment(blobs, ref) for ref in conversation.segments))
    return [entry for part in parts for entry in part] + list(conversation.tail)


async def _segment(blobs: BlobStore, ref: BlobRef) -> list[LogEntry]:
    value: dict[str, Any] = await blobs.get(ref)
    if "entries" in value:
        return [entry_from_json(e) for e in value["entries"]]
    nested = Conversation([ref_from_json(r) for r in value["segments"]])
    return await load(blobs, nested)


async def seal(
    blobs: BlobStore, workflow_id: str, conversation: Conversation
) -> Conversation | None:
    """The same conversation with a big tail sealed and many segments folded; None when it is
    small enough as it is."""
    tail = conversation.tail
    segments = list(conversation.segments)
    encoded = [entry_to_json(e) for e in tail]
    sealing = bool(tail) and (len(tail) >= SEAL_ENTRIES or encoded_size(encoded) >= SEAL_BYTES)
    if not sealing and len(segments) <= FOLD:
        return None
    if sealing:
        segments.append(await blobs.put(workflow_id, {"entries": encoded}))
        tail = []
    if len(segments) > FOLD:
        folded = {"segments": [ref_to_json(r) for r in segments]}
        segments = [await blobs.put(workflow_id, folded)]
    return Conversation(segments, list(tail))

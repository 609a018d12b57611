"""Values tether keeps in the payload store on purpose, by content hash: the fields of a log
entry that make it big (a tool result's message, the request header) and the sealed segments
of a conversation (`tether.temporal.conversation`).

Owns `BlobStore` — `put` a JSON value for a session's workflow and get a `BlobRef`, `get` it
back (an in-memory cache keyed by SHA-256, bounded in bytes, so a worker fetches each blob once
while it stays hot) — and the two entry operations: `externalize` (the activity side: an entry
over `inline_bytes` keeps its small fields inline and its biggest ones by reference) and
`resolve` (the reader's side: the entry's data as it was produced).

Values handed out by `get` and `resolve` are shared with the cache: treat them as read-only.
The same store's driver also serves Temporal's own external storage (`tether.temporal.storage`).
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
)

from .payloads import SESSION_WORKFLOW, BlobRef, LogEntry

__all__ = [
    "DEFAULT_CACHE_BYTES",
    "DEFAULT_INLINE_BYTES",
    "BlobStore",
    "encoded_size",
    "entry_from_json",
    "entry_to_json",
    "ref_from_json",
    "ref_to_json",
]

DEFAULT_INLINE_BYTES: Final = 8 * 1024
"""A log entry whose JSON is bigger keeps its biggest fields in the store."""

DEFAULT_CACHE_BYTES: Final = 64 * 1024 * 1024
_ENCODING: Final = b"json/plain"


def _dumps(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def encoded_size(value: object) -> int:
    """The size of `value` as compact UTF-8 JSON."""
    return len(_dumps(value))


def ref_to_json(ref: BlobRef) -> dict[str, Any]:
    return {"driver": ref.driver, "claim": dict(ref.claim), "sha256": ref.sha256, "size": ref.size}


def ref_from_json(value: Mapping[str, Any]) -> BlobRef:
    return BlobRef(
        str(value["driver"]),
        {str(k): str(v) for k, v in value["claim"].items()},
        str(value["sha256"]),
        int(value["size"]),
    )


def entry_to_json(entry: LogEntry) -> dict[str, Any]:
    out: dict[str, Any] = {"type": entry.type, "data": entry.data}
    if entry.refs:
        out["refs"] = {k: ref_to_json(r) for k, r in entry.refs.items()}
    return out


def entry_from_json(value: Mapping[str, Any]) -> LogEntry:
    refs = {str(k): ref_from_json(r) for k, r in (value.get("refs") or {}).items()}
    return LogEntry(str(value["type"]), dict(value["data"]), refs)


class BlobStore:
    """JSON values in the payload store of one namespace, cached by content (module note)."""

    def __init__(
        self, driver: StorageDriver, namespace: str, *, cache_bytes: int = DEFAULT_CACHE_BYTES
    ) -> None:
        self.driver = driver
        self.namespace = namespace
        self._cache: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._cached = 0
        self._limit = cache_bytes

    async def put(self, workflow_id: str, value: object) -> BlobRef:
        """Store `value` (JSON) among the workflow's payloads; its reference."""
        data = _dumps(value)
        payload = Payload(metadata={"encoding": _ENCODING}, data=data)
        target = StorageDriverWorkflowInfo(
            namespace=self.namespace, id=workflow_id, type=SESSION_WORKFLOW
        )
        (claim,) = await self.driver.store(StorageDriverStoreContext(target=target), [payload])
        digest = claim.claim_data.get("hash_value", "")
        ref = BlobRef(self.driver.name(), dict(claim.claim_data), digest, len(data))
        self._remember(digest, value, len(data))
        return ref

    async def get(self, ref: BlobRef) -> Any:
        """The value `ref` names. Raises ValueError for a reference of another store's driver,
        and the driver's error when the object cannot be read."""
        hit = self._cache.get(ref.sha256)
        if hit is not None:
            self._cache.move_to_end(ref.sha256)
            return hit[0]
        if ref.driver != self.driver.name():
            raise ValueError(
                f"blob sha256:{ref.sha256} was stored by payload-store driver {ref.driver!r}, "
                f"but this process uses {self.driver.name()!r}: every worker and client of a "
                "namespace must use the same --payload-store"
            )
        (payload,) = await self.driver.retrieve(
            StorageDriverRetrieveContext(), [StorageDriverClaim(dict(ref.claim))]
        )
        value = json.loads(payload.data)
        self._remember(ref.sha256, value, len(payload.data))
        return value

    async def get_all(self, refs: list[BlobRef]) -> list[Any]:
        return list(await asyncio.gather(*(self.get(r) for r in refs)))

    def _remember(self, digest: str, value: object, size: int) -> None:
        if not digest or size > self._limit // 4 or digest in self._cache:
            return
        self._cache[digest] = (value, size)
        self._cached += size
        while self._cached > self._limit:
            _, (_, dropped) = self._cache.popitem(last=False)
            self._cached -= dropped

    async def externalize(
        self, workflow_id: str, entry: LogEntry, *, inline_bytes: int = DEFAULT_INLINE_BYTES
    ) -> LogEntry:
        """`entry`, with its biggest fields moved to the store until the rest fits
        `inline_bytes` (an entry that fits already is returned as it is). A moved field keeps
        its place in `data` as None, so the resolved data has the produced key order."""
        data = dict(entry.data)
        sizes = {key: encoded_size(value) for key, value in data.items()}
        total = encoded_size(data)
        refs = dict(entry.refs)
        for key in sorted(sizes, key=lambda k: sizes[k], reverse=True):
            if total <= inline_bytes or sizes[key] < 256:
                break
            refs[key] = await self.put(workflow_id, data[key])
            data[key] = None
            total -= sizes[key]
        return LogEntry(entry.type, data, refs) if len(refs) > len(entry.refs) else entry

    async def resolve_all(self, entries: list[LogEntry]) -> list[dict[str, Any]]:
        """`resolve` of each entry, in order (only the entries with references are awaited)."""
        resolved = await asyncio.gather(*(self.resolve(e) for e in entries if e.refs))
        found = iter(resolved)
        return [next(found) if e.refs else e.data for e in entries]

    async def resolve(self, entry: LogEntry) -> dict[str, Any]:
        """The entry's data as it was produced (each field in `refs` filled in, in place)."""
        if not entry.refs:
            return entry.data
        keys = list(entry.refs)
        values = dict(zip(keys, await self.get_all([entry.refs[k] for k in keys]), strict=True))
        data = {k: values.pop(k) if k in values else v for k, v in entry.data.items()}
        return {**data, **values}

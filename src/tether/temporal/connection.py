"""How a tether process reaches a Temporal cluster: a client, its payload store, the SDK runtime.

Owns `connected(address, namespace, store)` — the payload store opened for the connection's
lifetime, a `Client` whose data converter moves big payloads into it (`tether.temporal.storage`),
the `BlobStore` over the same driver (`tether.temporal.blobs`), and a retry while a just-started
server comes up — and `runtime()`: one SDK runtime per process whose Rust core logs go to the
Python logger `temporalio.core` (so to stderr, never to stdout, where a script reads the answer;
warnings and errors only).

Every worker and client of a namespace uses the same store (`--payload-store`, else
`$TETHER_TEMPORAL_PAYLOAD_STORE`, else a directory under `$TETHER_HOME`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Final

from temporalio.client import Client
from temporalio.runtime import (
    LogForwardingConfig,
    LoggingConfig,
    Runtime,
    TelemetryConfig,
    TelemetryFilter,
)

from .blobs import BlobStore
from .storage import OpenStore, PayloadStore, open_store

__all__ = ["CORE_LOGGER", "Connection", "connect_client", "connected", "runtime"]

CORE_LOGGER: Final = "temporalio.core"

_runtime: Runtime | None = None


def runtime() -> Runtime:
    """The process's SDK runtime (created on first use): core logs at WARN and above are
    forwarded to the `temporalio.core` Python logger instead of the console."""
    global _runtime
    if _runtime is None:
        forwarding = LogForwardingConfig(logger=logging.getLogger(CORE_LOGGER))
        logs = LoggingConfig(
            filter=TelemetryFilter(core_level="WARN", other_level="ERROR"), forwarding=forwarding
        )
        _runtime = Runtime(telemetry=TelemetryConfig(logging=logs))
    return _runtime


@dataclass(frozen=True)
class Connection:
    """A client and the store its payloads go to."""

    client: Client
    store: OpenStore
    blobs: BlobStore


async def connect_client(
    address: str, namespace: str, store: OpenStore, *, attempts: int = 50
) -> Client:
    """A client for `address` whose data converter uses `store`, retrying briefly while a
    just-started server comes up."""
    for attempt in range(attempts):
        try:
            return await Client.connect(
                address,
                namespace=namespace,
                data_converter=store.data_converter,
                runtime=runtime(),
            )
        except RuntimeError:
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(0.1)
    raise AssertionError("unreachable")


@contextlib.asynccontextmanager
async def connected(
    address: str, namespace: str = "default", store: PayloadStore | None = None
) -> AsyncIterator[Connection]:
    """A connection for as long as the context lasts; `store` None is the default store.

    Raises ValueError for a bad store URL, RuntimeError when the store or the cluster cannot
    be reached.
    """
    async with open_store(store or PayloadStore.parse()) as opened:
        client = await connect_client(address, namespace, opened)
        yield Connection(client, opened, BlobStore(opened.driver, namespace))

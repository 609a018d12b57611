"""How a tether process reaches a Temporal cluster: a client, its payload store, the SDK runtime.

Owns `connected(cluster, namespace, store)` — the payload store opened for the connection's
lifetime, a `Client` whose data converter moves big payloads into it (`tether.temporal.storage`),
the `BlobStore` over the same driver (`tether.temporal.blobs`), and a retry while a just-started
server comes up (a refused connection only: a TLS or credential failure is reported at once, in
one line, as `ClusterUnreachable`) — and `runtime()`: one SDK runtime per process whose Rust
core logs go to the Python logger `temporalio.core` (so to stderr, never to stdout, where a
script reads the answer; warnings and errors only).

`cluster` is a resolved `Cluster` (`tether.temporal.cluster`: address, namespace, TLS, API key,
from flags and temporalio's environment configuration) or a plain address (plaintext, the given
namespace). Every worker and client of a namespace uses the same store (`--payload-store`, else
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
from .cluster import Cluster, connect_failure, is_transient
from .storage import OpenStore, PayloadStore, open_store

__all__ = [
    "CORE_LOGGER",
    "ClusterUnreachable",
    "Connection",
    "as_cluster",
    "connect_client",
    "connected",
    "runtime",
]

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


class ClusterUnreachable(RuntimeError):
    """The cluster cannot be reached or refused the connection; the message is one line that
    says what to check (`tether.temporal.cluster.connect_failure`)."""


@dataclass(frozen=True)
class Connection:
    """A client, the cluster it is connected to, and the store its payloads go to."""

    client: Client
    store: OpenStore
    blobs: BlobStore
    cluster: Cluster


def as_cluster(cluster: Cluster | str, namespace: str | None = None) -> Cluster:
    """`cluster` itself, or a plain address as a plaintext cluster in `namespace`."""
    if isinstance(cluster, Cluster):
        return cluster
    return Cluster(address=cluster, namespace=namespace or "default")


async def connect_client(
    cluster: Cluster | str, namespace: str | None, store: OpenStore, *, attempts: int = 50
) -> Client:
    """A client of `cluster` whose data converter uses `store`, retrying briefly while a
    just-started server refuses connections.

    Raises `ClusterUnreachable` (one line) when it cannot connect, ValueError for a
    certificate or key file that cannot be read."""
    from temporalio.service import RPCError

    target = as_cluster(cluster, namespace)
    kwargs = target.connect_kwargs()
    for attempt in range(attempts):
        try:
            return await Client.connect(
                target.address,
                data_converter=store.data_converter,
                runtime=runtime(),
                **kwargs,
            )
        except (RuntimeError, RPCError) as exc:
            if attempt == attempts - 1 or not is_transient(exc):
                raise ClusterUnreachable(connect_failure(exc, target)) from None
            await asyncio.sleep(0.1)
    raise AssertionError("unreachable")


@contextlib.asynccontextmanager
async def connected(
    cluster: Cluster | str, namespace: str | None = None, store: PayloadStore | None = None
) -> AsyncIterator[Connection]:
    """A connection for as long as the context lasts; `store` None is the default store.

    Raises ValueError for a bad store URL or an unreadable certificate, RuntimeError when the
    store cannot be reached, `ClusterUnreachable` (a RuntimeError) when the cluster cannot.
    """
    target = as_cluster(cluster, namespace)
    async with open_store(store or PayloadStore.parse()) as opened:
        client = await connect_client(target, None, opened)
        yield Connection(client, opened, BlobStore(opened.driver, target.namespace), target)

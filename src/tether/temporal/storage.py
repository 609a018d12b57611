"""The payload store: where everything too big for a Temporal history lives.

Owns choosing and opening the store a worker or client uses — `PayloadStore.parse(url)`:
`file:///path` (one host: `FileStorageDriver`, below) or `s3://bucket` (a cluster: temporalio's
own `S3StorageDriver`, over aioboto3, configured by the usual AWS environment: credentials,
`AWS_REGION`, `AWS_ENDPOINT_URL_S3` for an S3-compatible server) — and the data converter built
on it: temporalio's `ExternalStorage` moves every payload of at least `threshold` bytes (default
256 KiB) out of the history and leaves a reference, in both directions, for the workflow, its
activities, Updates, Signals, queries and continue-as-new alike. `tether.temporal.blobs` uses the
same driver for what tether stores by reference on purpose (big tool results, the conversation).

Every worker and client of a namespace must use the same store: a reference written through one
store cannot be read through another (the error says so). Objects are content-addressed
(SHA-256 of the stored bytes), verified when read, and grouped per workflow (so per session),
which is what a retention rule or a clean-up selects on (docs/temporal.md, "Payload store").

Not here: which values go by reference (`tether.temporal.blobs`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import secrets
import socket
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import urlparse

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    DataConverter,
    ExternalStorage,
    StorageDriver,
    StorageDriverActivityInfo,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
)

from ..kernel import tether_home

__all__ = [
    "DEFAULT_THRESHOLD",
    "STORE_ENV",
    "FileStorageDriver",
    "OpenStore",
    "PayloadStore",
    "default_store_url",
    "open_store",
]

DEFAULT_THRESHOLD: Final = 256 * 1024
"""Payloads of this many bytes or more leave the history (Temporal's own default)."""

STORE_ENV: Final = "TETHER_TEMPORAL_PAYLOAD_STORE"
"""The environment variable that names the store when `--payload-store` is not given."""

_SAFE: Final = re.compile(r"[A-Za-z0-9_-]")
_SEGMENT: Final = re.compile(r"[A-Za-z0-9_%-]+")
_HEX64: Final = re.compile(r"[0-9a-f]{64}")


def default_store_url() -> str:
    """`$TETHER_TEMPORAL_PAYLOAD_STORE`, else a directory under `$TETHER_HOME/temporal`."""
    return os.environ.get(STORE_ENV) or (tether_home() / "temporal" / "payloads").as_uri()


def _segment(value: str | None) -> str:
    """A path segment for `value`: every byte outside `[A-Za-z0-9_-]` as `%XX` (no dots, so
    never `.` or `..`); `_` for nothing."""
    if not value:
        return "_"
    return "".join(
        chr(b) if _SAFE.fullmatch(chr(b)) else f"%{b:02X}" for b in value.encode("utf-8")
    )


def _scope(context: StorageDriverStoreContext) -> str:
    """`<namespace>/<workflow id>` of the store's target (an activity's own id when it has no
    workflow), so one session's payloads share a directory."""
    target = context.target
    if isinstance(target, StorageDriverWorkflowInfo):
        return f"{_segment(target.namespace)}/w/{_segment(target.id)}"
    if isinstance(target, StorageDriverActivityInfo):
        return f"{_segment(target.namespace)}/a/{_segment(target.id)}"
    return "_/_"


class FileStorageDriver(StorageDriver):
    """Payloads as files under one directory, for a single host (or a directory every worker
    and client mounts). `<root>/<namespace>/w/<workflow id>/<sha256>`; written to a temporary
    file, fsynced and renamed into place (an existing object is not written again); read back
    and checked against its digest. A claim names the host that wrote it, so a reference read
    on a host without the file says where it was."""

    def __init__(self, root: Path, *, name: str = "tether.fs") -> None:
        self.root = root
        self._name = name
        self._host = socket.gethostname()

    def name(self) -> str:
        return self._name

    def type(self) -> str:
        return "tether.fs"

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        scope = _scope(context)
        blobs = [p.SerializeToString() for p in payloads]
        return await asyncio.to_thread(lambda: [self._write(scope, data) for data in blobs])

    def _write(self, scope: str, data: bytes) -> StorageDriverClaim:
        digest = hashlib.sha256(data).hexdigest()
        key = f"{scope}/{digest}"
        path = self.root / key
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = path.with_name(f".{digest}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
            try:
                with temp.open("wb") as file:
                    file.write(data)
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temp, path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    temp.unlink()
            fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        claim = {"key": key, "hash_algorithm": "sha256", "hash_value": digest, "host": self._host}
        return StorageDriverClaim(claim)

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        return await asyncio.to_thread(lambda: [self._read(dict(c.claim_data)) for c in claims])

    def _read(self, claim: dict[str, str]) -> Payload:
        key, digest = claim.get("key", ""), claim.get("hash_value", "")
        parts = key.split("/")
        if (
            claim.get("hash_algorithm") != "sha256"
            or not _HEX64.fullmatch(digest)
            or parts[-1] != digest
            or not all(_SEGMENT.fullmatch(p) for p in parts)
        ):
            raise ValueError(f"not a {self._name} payload reference: {claim!r}")
        path = self.root.joinpath(*parts)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(
                f"payload {key} is not in the payload store {self.root} (host "
                f"{self._host}; it was stored on host {claim.get('host', '?')}): every worker "
                "and client of a namespace must share one payload store — across hosts use "
                "S3 (--payload-store s3://BUCKET)"
            ) from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise ValueError(f"payload {path} does not match its digest sha256:{digest}")
        payload = Payload()
        payload.ParseFromString(data)
        return payload


@dataclass(frozen=True)
class PayloadStore:
    """Which store (`url`: `file:///dir` or `s3://bucket`) and the size from which a payload
    leaves the history (`threshold`, bytes)."""

    url: str
    threshold: int = DEFAULT_THRESHOLD

    @classmethod
    def parse(cls, url: str | None = None, *, threshold: int = DEFAULT_THRESHOLD) -> PayloadStore:
        """The store `url` names (None: `default_store_url()`).

        Raises ValueError, naming what is wrong and an example, for anything else.
        """
        url = url or default_store_url()
        parsed = urlparse(url)
        if threshold < 1024:
            raise ValueError(f"the payload threshold must be at least 1024 bytes; got {threshold}")
        if parsed.scheme == "file":
            if parsed.netloc not in ("", "localhost") or not parsed.path.startswith("/"):
                raise ValueError(
                    f"payload store {url!r}: a file store is file:///ABSOLUTE/DIR, e.g. "
                    "file:///var/lib/tether/payloads"
                )
            return cls(url, threshold)
        if parsed.scheme == "s3":
            if not parsed.netloc or parsed.path.strip("/") or parsed.query:
                raise ValueError(
                    f"payload store {url!r}: an S3 store is s3://BUCKET (the driver names its "
                    "keys; endpoint, region and credentials come from the AWS environment)"
                )
            return cls(url, threshold)
        raise ValueError(
            f"payload store {url!r} is neither file:///DIR (one host) nor s3://BUCKET (a cluster)"
        )

    @property
    def kind(self) -> str:
        return urlparse(self.url).scheme

    @property
    def location(self) -> str:
        """The directory (file) or the bucket (s3)."""
        parsed = urlparse(self.url)
        return parsed.path if parsed.scheme == "file" else parsed.netloc


@dataclass(frozen=True)
class OpenStore:
    """An opened store: the driver, and the data converter whose external storage uses it."""

    store: PayloadStore
    driver: StorageDriver

    @property
    def data_converter(self) -> DataConverter:
        storage = ExternalStorage(
            drivers=[self.driver], payload_size_threshold=self.store.threshold
        )
        return DataConverter(external_storage=storage)


@contextlib.asynccontextmanager
async def open_store(store: PayloadStore) -> AsyncIterator[OpenStore]:
    """Open `store` for as long as the context lasts (an S3 client is one connection pool).

    Raises RuntimeError (one line: what failed and how to fix it) when the bucket cannot be
    reached, and ImportError naming the extra when S3 support is not installed.
    """
    if store.kind == "file":
        root = Path(store.location)
        await asyncio.to_thread(root.mkdir, parents=True, exist_ok=True)
        yield OpenStore(store, FileStorageDriver(root))
        return
    try:
        import aioboto3
        from botocore.exceptions import BotoCoreError, ClientError
        from temporalio.contrib.aws.s3driver import S3StorageDriver
        from temporalio.contrib.aws.s3driver.aioboto3 import new_aioboto3_client
    except ImportError as exc:
        raise ImportError(
            "an s3:// payload store needs the extra: pip install 'tether[temporal-s3]'"
        ) from exc
    bucket = store.location
    async with aioboto3.Session().client("s3") as s3:
        try:
            await s3.head_bucket(Bucket=bucket)
        except (BotoCoreError, ClientError) as exc:
            raise RuntimeError(
                f"payload store s3://{bucket} cannot be reached ({exc}); create the bucket, or "
                "set AWS credentials, AWS_REGION and (for an S3-compatible server) "
                "AWS_ENDPOINT_URL_S3"
            ) from exc
        yield OpenStore(store, S3StorageDriver(new_aioboto3_client(s3), bucket))

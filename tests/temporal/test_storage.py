"""The payload store without a cluster: the file driver (content-addressed, verified, confined to
its directory), the store URLs, the blob store's by-reference entries and the conversation's
sealed segments."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("temporalio")

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
)

from tether.temporal import conversation
from tether.temporal.blobs import BlobStore
from tether.temporal.payloads import BlobRef, Conversation, LogEntry
from tether.temporal.storage import FileStorageDriver, PayloadStore

SESSION = StorageDriverStoreContext(
    target=StorageDriverWorkflowInfo(namespace="default", id="tether-session-a/../b", run_id="r")
)


async def store_one(driver: FileStorageDriver, data: bytes) -> StorageDriverClaim:
    (claim,) = await driver.store(SESSION, [Payload(metadata={"encoding": b"binary"}, data=data)])
    return claim


async def test_a_stored_payload_reads_back_from_a_file_named_by_its_digest(tmp_path: Path) -> None:
    driver = FileStorageDriver(tmp_path)
    claim = await store_one(driver, b"x" * 300_000)
    key = claim.claim_data["key"]
    assert key == f"default/w/tether-session-a%2F%2E%2E%2Fb/{claim.claim_data['hash_value']}"
    (payload,) = await driver.retrieve(StorageDriverRetrieveContext(), [claim])
    assert payload.data == b"x" * 300_000
    assert [p.name for p in (tmp_path / key).parent.iterdir()] == [key.rsplit("/", 1)[1]]


async def test_the_same_payload_twice_is_one_file(tmp_path: Path) -> None:
    driver = FileStorageDriver(tmp_path)
    first, second = await store_one(driver, b"same"), await store_one(driver, b"same")
    assert first == second
    assert len(list(tmp_path.rglob("*"))) == 4  # default/, w/, <workflow>/, the one file


async def test_a_payload_that_no_longer_matches_its_digest_is_refused(tmp_path: Path) -> None:
    driver = FileStorageDriver(tmp_path)
    claim = await store_one(driver, b"original")
    (tmp_path / claim.claim_data["key"]).write_bytes(b"changed")
    with pytest.raises(ValueError, match="does not match its digest"):
        await driver.retrieve(StorageDriverRetrieveContext(), [claim])


async def test_a_claim_that_points_outside_the_store_is_refused(tmp_path: Path) -> None:
    driver = FileStorageDriver(tmp_path / "store")
    digest = "0" * 64
    claim = StorageDriverClaim(
        {"key": f"../../etc/{digest}", "hash_algorithm": "sha256", "hash_value": digest}
    )
    with pytest.raises(ValueError, match=r"not a tether\.fs payload reference"):
        await driver.retrieve(StorageDriverRetrieveContext(), [claim])


async def test_a_payload_missing_from_the_store_names_the_host_that_stored_it(
    tmp_path: Path,
) -> None:
    claim = await store_one(FileStorageDriver(tmp_path / "one"), b"elsewhere")
    with pytest.raises(FileNotFoundError, match=r"stored on host .*share one payload store"):
        await FileStorageDriver(tmp_path / "two").retrieve(StorageDriverRetrieveContext(), [claim])


def test_store_urls_name_a_directory_or_a_bucket(tmp_path: Path) -> None:
    assert PayloadStore.parse(tmp_path.as_uri()).location == str(tmp_path)
    assert PayloadStore.parse("s3://tether-payloads").location == "tether-payloads"
    with pytest.raises(ValueError, match="an S3 store is s3://BUCKET"):
        PayloadStore.parse("s3://bucket/prefix")
    with pytest.raises(ValueError, match="neither file:///DIR"):
        PayloadStore.parse("gs://bucket")
    with pytest.raises(ValueError, match="a file store is file:///ABSOLUTE/DIR"):
        PayloadStore.parse("file://host/dir")


def test_the_default_store_is_the_environment_s_else_under_tether_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_HOME", str(tmp_path))
    monkeypatch.delenv("TETHER_TEMPORAL_PAYLOAD_STORE", raising=False)
    assert PayloadStore.parse().url == (tmp_path / "temporal" / "payloads").as_uri()
    monkeypatch.setenv("TETHER_TEMPORAL_PAYLOAD_STORE", "s3://elsewhere")
    assert PayloadStore.parse().url == "s3://elsewhere"


async def test_a_big_entry_keeps_its_small_fields_inline_and_resolves_as_produced(
    tmp_path: Path,
) -> None:
    blobs = BlobStore(FileStorageDriver(tmp_path), "default")
    data = {"turn": 1, "step": 2, "message": {"text": "y" * 20_000}, "meta": {"exit": 0}}
    entry = await blobs.externalize("tether-session-s", LogEntry("tool/result", data))
    assert entry.data == {"turn": 1, "step": 2, "message": None, "meta": {"exit": 0}}
    assert list(entry.refs) == ["message"]
    fresh = BlobStore(FileStorageDriver(tmp_path), "default")  # nothing cached
    resolved = await fresh.resolve(entry)
    assert (list(resolved), resolved) == (list(data), data)


async def test_a_small_entry_is_left_as_it_is(tmp_path: Path) -> None:
    blobs = BlobStore(FileStorageDriver(tmp_path), "default")
    entry = LogEntry("tool/result", {"turn": 1, "message": {"text": "short"}})
    assert await blobs.externalize("w", entry) is entry
    assert list(tmp_path.iterdir()) == []


async def test_a_conversation_seals_its_tail_and_folds_its_segments_keeping_every_entry(
    tmp_path: Path,
) -> None:
    blobs = BlobStore(FileStorageDriver(tmp_path), "default")
    entries = [LogEntry("user/message", {"n": n, "text": "z" * 2000}) for n in range(1500)]
    talk = Conversation()
    for entry in entries:
        talk = Conversation(talk.segments, [*talk.tail, entry])
        talk = await conversation.seal(blobs, "w", talk) or talk
    assert len(talk.segments) <= conversation.FOLD
    assert len(talk.tail) < conversation.SEAL_ENTRIES
    fresh = BlobStore(FileStorageDriver(tmp_path), "default")
    assert [e.data["n"] for e in await conversation.load(fresh, talk)] == list(range(1500))


async def test_sealing_the_same_tail_twice_writes_nothing_new(tmp_path: Path) -> None:
    blobs = BlobStore(FileStorageDriver(tmp_path), "default")
    tail = [LogEntry("user/message", {"text": "q" * 70_000})]
    first = await conversation.seal(blobs, "w", Conversation([], tail))
    files = sorted(os.walk(tmp_path))
    assert first == await conversation.seal(blobs, "w", Conversation([], tail))
    assert sorted(os.walk(tmp_path)) == files


async def test_a_reference_of_another_store_s_driver_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    ref = BlobRef("aws.s3driver", {"bucket": "b", "key": "k"}, "0" * 64, 10)
    blobs = BlobStore(FileStorageDriver(tmp_path), "default")
    entry = LogEntry("tool/result", {"message": None}, {"message": ref})
    with pytest.raises(ValueError, match="must use the same --payload-store"):
        await blobs.resolve(entry)


async def test_resolving_many_entries_keeps_their_order(tmp_path: Path) -> None:
    blobs = BlobStore(FileStorageDriver(tmp_path), "default")
    small = [LogEntry("user/message", {"n": n}) for n in range(3)]
    big = [
        await blobs.externalize("w", LogEntry("tool/result", {"n": n, "text": "b" * 9000}))
        for n in range(3, 5)
    ]
    resolved = await blobs.resolve_all([small[0], big[0], small[1], big[1], small[2]])
    assert [d["n"] for d in resolved] == [0, 3, 1, 4, 2]
    assert resolved[1]["text"] == "b" * 9000

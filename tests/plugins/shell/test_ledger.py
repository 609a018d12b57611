"""The orphan ledger: while a subprocess service owns live groups, a ledger file names them and
the processes that escaped them (`setsid`); a later tether stops the groups and escaped
processes whose owner is gone, and never one whose owner still runs or a pid that now belongs to
another process."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tether.core.signals import AbortController
from tether.plugins.shell._collect import CaptureLimits
from tether.plugins.shell._ledger import GroupLedger, reap_orphans, start_ticks
from tether.plugins.shell._process import SpawnSpec
from tether.plugins.shell.subprocesses import SubprocessService

from ._support import alive, pids, until


@pytest.fixture
def group() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    yield child
    if child.poll() is None:
        child.kill()
    child.wait()


def _dead_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def _write_ledger(directory: Path, owner: str, *lines: tuple[int, int] | str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{owner}.groups"
    path.write_text(
        "".join(
            f"{line}\n" if isinstance(line, str) else f"{line[0]} {line[1]}\n" for line in lines
        )
    )
    return path


def _wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.02)
    return False


async def test_a_spawned_group_is_in_the_ledger_until_the_service_closes(tmp_path: Path) -> None:
    ledger = GroupLedger(tmp_path)
    service = SubprocessService(ledger=ledger)
    process = await service.spawn(
        SpawnSpec(
            argv=("sleep", "30"),
            cwd=str(tmp_path),
            stdout=CaptureLimits(1000),
            stderr=CaptureLimits(1000),
            grace_ms=200,
        ),
        signal=AbortController().signal,
    )
    assert ledger.path.read_text() == f"{process.pid} {start_ticks(process.pid)}\n"

    await service.aclose()

    assert not ledger.path.exists()


def test_reaping_stops_the_groups_of_an_owner_that_is_gone(
    tmp_path: Path, group: subprocess.Popen[bytes]
) -> None:
    ticks = start_ticks(group.pid)
    assert ticks is not None
    ledger = _write_ledger(tmp_path, f"{_dead_pid()}-1", (group.pid, ticks))

    stopped = reap_orphans(tmp_path, grace_s=0.5)

    assert stopped == [group.pid]
    assert _wait_gone(group.pid)
    assert not ledger.exists()


def test_reaping_leaves_the_groups_of_a_live_owner_alone(
    tmp_path: Path, group: subprocess.Popen[bytes]
) -> None:
    ticks = start_ticks(group.pid)
    assert ticks is not None
    me = f"{os.getpid()}-{start_ticks(os.getpid())}"
    ledger = _write_ledger(tmp_path, me, (group.pid, ticks))

    assert reap_orphans(tmp_path) == []
    assert group.poll() is None
    assert ledger.exists()


def test_reaping_never_signals_a_pid_that_now_belongs_to_another_process(
    tmp_path: Path, group: subprocess.Popen[bytes]
) -> None:
    ticks = start_ticks(group.pid)
    assert ticks is not None
    _write_ledger(tmp_path, f"{_dead_pid()}-1", (group.pid, ticks + 1))

    assert reap_orphans(tmp_path) == []
    assert group.poll() is None


def test_reaping_a_missing_directory_does_nothing(tmp_path: Path) -> None:
    assert reap_orphans(tmp_path / "absent") == []


async def test_a_process_that_escaped_its_group_is_in_the_ledger_while_its_command_runs(
    tmp_path: Path,
) -> None:
    ledger = GroupLedger(tmp_path)
    service = SubprocessService(ledger=ledger)
    pidfile = tmp_path / "escaped"
    process = await service.spawn(
        SpawnSpec(
            argv=("bash", "-c", f"setsid sleep 30 & echo $! > {pidfile}; sleep 30"),
            cwd=str(tmp_path),
            stdout=CaptureLimits(1000),
            stderr=CaptureLimits(1000),
            grace_ms=200,
        ),
        signal=AbortController().signal,
    )
    try:
        await until(lambda: len(pids(pidfile)) == 1)
        (escaped,) = pids(pidfile)
        await until(lambda: os.getsid(escaped) == escaped)  # it left the session
        expected = (
            f"{process.pid} {start_ticks(process.pid)}\n{escaped} {start_ticks(escaped)} escaped\n"
        )

        await until(lambda: ledger.path.read_text() == expected, within_s=10)
    finally:
        await service.aclose()

    assert not alive(escaped)
    assert not ledger.path.exists()


def test_reaping_stops_an_escaped_process_of_an_owner_that_is_gone(
    tmp_path: Path, group: subprocess.Popen[bytes]
) -> None:
    ticks = start_ticks(group.pid)
    assert ticks is not None
    ledger = _write_ledger(tmp_path, f"{_dead_pid()}-1", f"{group.pid} {ticks} escaped")

    stopped = reap_orphans(tmp_path, grace_s=0.5)

    assert stopped == [group.pid]
    assert _wait_gone(group.pid)
    assert not ledger.exists()


def test_reaping_never_signals_an_escaped_pid_that_now_belongs_to_another_process(
    tmp_path: Path, group: subprocess.Popen[bytes]
) -> None:
    ticks = start_ticks(group.pid)
    assert ticks is not None
    _write_ledger(tmp_path, f"{_dead_pid()}-1", f"{group.pid} {ticks + 1} escaped")

    assert reap_orphans(tmp_path) == []
    assert group.poll() is None

"""The orphan ledger: while a subprocess service owns live groups, a ledger file names them, the
tags of their commands (written before the spawn) and the processes that escaped them
(`setsid`); a later tether stops the groups, escaped processes and tagged processes whose owner
is gone — a daemon that escaped just before its owner was SIGKILLed, before the owner ever
looked for it, included — and never one whose owner still runs, another command's, or a pid
that now belongs to another process. A tether killed while it sweeps leaves the ledger to the
next one."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tether.core.signals import AbortController
from tether.plugins.shell._collect import CaptureLimits
from tether.plugins.shell._ledger import GroupLedger, reap_orphans, start_ticks
from tether.plugins.shell._process import SpawnSpec
from tether.plugins.shell._tree import TAG_VARIABLE
from tether.plugins.shell.subprocesses import SubprocessService

from ...patience import PATIENCE_S
from ._support import alive, pids, until

pytestmark = pytest.mark.usefixtures("uncontained")  # the fallback (no namespaces)


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
    deadline = time.monotonic() + PATIENCE_S
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
    assert ledger.path.read_text() == (
        f"tag {process.tag}\n{process.pid} {start_ticks(process.pid)}\n"
    )

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
            f"tag {process.tag}\n{process.pid} {start_ticks(process.pid)}\n"
            f"{escaped} {start_ticks(escaped)} escaped\n"
        )

        await until(lambda: ledger.path.read_text() == expected)
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


def test_reaping_stops_the_processes_that_carry_a_tag_of_an_owner_that_is_gone(
    tmp_path: Path,
) -> None:
    tagged, other = (
        subprocess.Popen(
            ["sleep", "30"], start_new_session=True, env={**os.environ, TAG_VARIABLE: tag}
        )
        for tag in ("0123456789abcdef", "fedcba9876543210")
    )
    try:
        ledger = _write_ledger(tmp_path, f"{_dead_pid()}-1", "tag 0123456789abcdef")

        stopped = reap_orphans(tmp_path, grace_s=0.5)

        assert stopped == [tagged.pid]
        assert _wait_gone(tagged.pid)
        assert other.poll() is None
        assert not ledger.exists()
    finally:
        for child in (tagged, other):
            child.kill()
            child.wait()


_OWNER = """
import asyncio, os, signal, sys
from pathlib import Path
from tether.core.signals import AbortController
from tether.plugins.shell import subprocesses
from tether.plugins.shell._collect import CaptureLimits
from tether.plugins.shell._ledger import GroupLedger
from tether.plugins.shell._process import SpawnSpec
from tether.plugins.shell._tree import TAG_VARIABLE

subprocesses._LOOK_EVERY_S = 3600  # it never looks for escaped processes before it is killed

async def main():
    directory, pidfile = Path(sys.argv[1]), Path(sys.argv[2])
    service = subprocesses.SubprocessService(ledger=GroupLedger(directory))
    note = f"echo $$ > {pidfile}.tmp; mv {pidfile}.tmp {pidfile}"
    daemon = f"setsid -f bash -c '{note}; exec sleep 30'"
    await service.spawn(
        SpawnSpec(
            argv=("bash", "-c", f"echo $$ > {pidfile}.group; {daemon}; sleep 30"),
            cwd=str(directory),
            stdout=CaptureLimits(1000),
            stderr=CaptureLimits(1000),
        ),
        signal=AbortController().signal,
    )
    while not pidfile.exists():
        await asyncio.sleep(0.01)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""
"""An owner that starts a command whose daemon leaves the group at once, and is SIGKILLed as
soon as the daemon runs: before the service's first look, so no `escaped` line exists."""


def test_reaping_stops_a_daemon_that_escaped_before_its_killed_owner_ever_looked(
    tmp_path: Path,
) -> None:
    directory, pidfile = tmp_path / "run", tmp_path / "daemon.pid"
    owner = subprocess.run(
        [sys.executable, "-c", _OWNER, str(directory), str(pidfile)],
        capture_output=True,
        check=False,
        timeout=PATIENCE_S,
    )
    assert owner.returncode == -signal.SIGKILL, owner.stderr
    daemon = int(pidfile.read_text())
    group: int | None = None
    try:
        group = int(Path(f"{pidfile}.group").read_text())
        (ledger,) = directory.glob("*.groups")
        assert "escaped" not in ledger.read_text()  # never looked for
        assert os.getsid(daemon) == daemon  # it left the command's session
        assert alive(daemon)
        assert alive(group)

        stopped = reap_orphans(directory, grace_s=0.5)

        assert stopped == [group, daemon]
        assert _wait_gone(daemon)
        assert _wait_gone(group)
        assert not ledger.exists()
    finally:
        for pid in (daemon, group):
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


_SWEEPER = """
import os, signal, sys
from pathlib import Path
from tether.plugins.shell import _group, _ledger

def killed(pgid, sig):
    os.kill(os.getpid(), signal.SIGKILL)

_group.signal_group = killed  # SIGKILLed at its first signal: after it read the ledger
_ledger.reap_orphans(Path(sys.argv[1]))
"""


def test_a_tether_killed_while_it_sweeps_leaves_the_ledger_to_the_next_one(
    tmp_path: Path, group: subprocess.Popen[bytes]
) -> None:
    ticks = start_ticks(group.pid)
    assert ticks is not None
    ledger = _write_ledger(tmp_path, f"{_dead_pid()}-1", (group.pid, ticks))
    sweeper = subprocess.run(
        [sys.executable, "-c", _SWEEPER, str(tmp_path)],
        capture_output=True,
        check=False,
        timeout=PATIENCE_S,
    )
    assert sweeper.returncode == -signal.SIGKILL, sweeper.stderr
    assert ledger.exists()
    assert group.poll() is None

    stopped = reap_orphans(tmp_path, grace_s=0.5)

    assert stopped == [group.pid]
    assert _wait_gone(group.pid)
    assert not ledger.exists()

"""The sandbox and the containment of `tether tools call bash`, end to end (issue 24), as this
user and as an unprivileged one (`tests/users.py`).

Contract, in the default `workspace-write` mode:
- a write outside the workspace fails (an absolute path, `..`, a symlink planted in the
  workspace, `/proc/self/root`) and the result says it may have failed because of the sandbox;
  the same write inside the workspace works;
- `.git/hooks`, `.git/config`, `.claude/`, `.mcp.json` and `tether.yml` stay as they were, and
  a missing one is not created (its placeholder is gone once tether exits);
- no connection reaches a listener on 127.0.0.1 outside, over TCP or a Unix socket;
- tether's process is neither visible nor signalable from inside;
- nothing a command started survives its end, an abort, its timeout, or a SIGKILL of tether
  (2 s later no process carrying the test's marker exists).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shlex
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from ..plugins.shell._support import ESCAPES
from ..users import CURRENT, PYTHON_FOR_ALL, USERS, User, private_directory
from ._support import TETHER

pytestmark = pytest.mark.timeout(300)


@dataclass
class Box:
    """A user's workspace, home and a directory of theirs outside the workspace."""

    user: User
    root: Path

    @property
    def workspace(self) -> Path:
        return self.root / "ws"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    def env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.home),
            "TETHER_HOME": str(self.home / ".tether"),
            "LANG": "C.UTF-8",
        }

    def argv(self, command: str, **arguments: object) -> list[str]:
        call = json.dumps({"command": command, "description": "test", **arguments})
        return self.user.argv(
            [str(TETHER), "tools", "call", "bash", call, "--cwd", str(self.workspace)]
        )

    def run(self, command: str, **arguments: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(command, **arguments),
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )

    def start(self, command: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.argv(command),
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


@pytest.fixture(params=USERS)
def box(request: pytest.FixtureRequest) -> Iterator[Box]:
    user: User = request.param
    with private_directory(user) as root:
        for name in ("ws", "home", "outside"):
            (root / name).mkdir()
        user.own(root)
        yield Box(user, root)


def marked(token: str) -> list[psutil.Process]:
    """The live processes whose command line mentions `token` (bwrap's included)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.status() != psutil.STATUS_ZOMBIE and token in " ".join(process.cmdline()):
                found.append(process)
        except psutil.Error:
            continue
    return found


def battery(token: str) -> tuple[str, list[str]]:
    """One command that starts every escape (durations `60.<token><i>`) and waits until they
    all run; and those durations."""
    durations = [f"60.{token}{index}" for index in range(len(ESCAPES))]
    patterns = ESCAPES.values()
    lines = [pattern.format(d=d) for pattern, d in zip(patterns, durations, strict=True)]
    waits = [f"until pgrep -fx 'sleep {d}' > /dev/null; do sleep 0.01; done" for d in durations]
    return "\n".join([*lines, *waits, "touch escaped"]), durations


def stop(process: subprocess.Popen[str]) -> None:
    """SIGKILL it (if it still runs) and collect it, pipes closed."""
    process.kill()
    process.communicate(timeout=60)


def wait_for(condition: object, *, within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within_s} s: {what}")
        time.sleep(0.01)


# -- the filesystem ----------------------------------------------------------------------------


def test_touching_a_file_in_home_fails_with_a_sandbox_message_and_leaves_no_file(box: Box) -> None:
    done = box.run("touch ~/x")

    assert done.returncode == 0, done.stderr
    assert "Read-only file system" in done.stdout
    assert "[this may have failed because of the sandbox (workspace-write)" in done.stdout
    assert not (box.home / "x").exists()


def test_the_same_write_inside_the_workspace_works(box: Box) -> None:
    done = box.run("touch x && echo made")

    assert (done.returncode, done.stdout) == (0, "made\n"), done.stderr
    assert (box.workspace / "x").exists()
    if box.user.uid is not None:
        assert (box.workspace / "x").stat().st_uid == box.user.uid


def test_no_route_writes_outside_the_workspace(box: Box) -> None:
    outside = box.outside
    routes = [
        f"echo a > {outside}/absolute",
        "echo b > ../outside/dotdot",
        f"ln -s {outside} planted && echo c > planted/symlink",
        f"echo d > /proc/self/root{outside}/proc-root",
        f"cp /etc/hostname {outside}/copied",
    ]
    command = "; ".join(f"({route}) 2>&1 | grep -c 'Read-only file system'" for route in routes)

    done = box.run(command)

    assert done.stdout.split() == ["1"] * len(routes), done.stdout
    assert sorted(p.name for p in outside.iterdir()) == []
    assert (box.workspace / "planted").is_symlink()  # the link itself is the workspace's


def test_the_protected_paths_stay_as_they_were(box: Box) -> None:
    ws = box.workspace
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text("{}")
    (ws / ".mcp.json").write_text('{"mcpServers": {}}')
    (ws / "tether.yml").write_text("plugins: []\n")
    box.user.own(ws)
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    writes = [
        "echo evil > .git/hooks/pre-commit",
        "echo '[core] fsmonitor = evil' >> .git/config",
        "echo evil > .claude/settings.json",
        "rm -f .mcp.json",
        "echo 'plugins: [{name: evil}]' > tether.yml",
        "mv .claude .claude-gone",
    ]

    done = box.run("; ".join(f"({write}) 2>/dev/null || echo refused" for write in writes))

    assert done.stdout.split() == ["refused"] * len(writes), done.stdout
    after = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    assert after == before


def test_a_missing_protected_path_is_not_created_and_no_placeholder_remains(box: Box) -> None:
    ws = box.workspace
    creates = [
        "git init -q .",
        "mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
        "mkdir .claude",
        "echo '{}' > .mcp.json",
        "echo 'plugins: []' > tether.yml",
        "ls -a > listing",
    ]

    done = box.run("; ".join(f"({create}) 2>/dev/null || echo refused" for create in creates))

    assert done.stdout.split() == ["refused"] * (len(creates) - 1), done.stdout
    assert sorted(p.name for p in ws.iterdir()) == ["listing"]  # placeholders removed
    seen = (ws / "listing").read_text().split()
    assert {".git", ".claude", ".mcp.json", "tether.yml"} <= set(seen)  # pinned while it ran


# -- the network and tether's own process --------------------------------------------------------


def test_no_connection_reaches_a_listener_outside(box: Box) -> None:
    tcp = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    path = box.outside / "daemon.sock"
    unix.bind(str(path))
    os.chmod(path, 0o777)
    unix.listen()
    tcp.settimeout(0)
    unix.settimeout(0)
    port = tcp.getsockname()[1]
    script = (
        "import socket, sys\n"
        f"for family, address in ((socket.AF_INET, ('127.0.0.1', {port})), "
        f"(socket.AF_UNIX, {str(path)!r})):\n"
        "    try:\n"
        "        socket.socket(family).connect(address); print('connected')\n"
        "    except OSError as error: print(error.strerror)\n"
    )
    try:
        done = box.run(f"{PYTHON_FOR_ALL} -c {shlex.quote(script)}")

        assert done.stdout.splitlines() == ["Connection refused", "Operation not permitted"]
        for listener in (tcp, unix):
            with pytest.raises(BlockingIOError):
                listener.accept()
    finally:
        tcp.close()
        unix.close()


def test_tether_is_neither_visible_nor_signalable_from_inside(box: Box) -> None:
    command = (
        "until [ -s tether.pid ]; do sleep 0.01; done; pid=$(cat tether.pid)\n"
        "test -e /proc/$pid && echo visible || echo invisible\n"
        "kill -TERM $pid 2>/dev/null && echo signalled || echo unsignalable\n"
        "cat /proc/1/cmdline | tr '\\0' ' ' | cut -c1-200"
    )
    process = box.start(command)
    (box.workspace / "tether.pid").write_text(str(process.pid))
    stdout, stderr = process.communicate(timeout=240)

    assert process.returncode == 0, stderr
    lines = stdout.splitlines()
    assert lines[:2] == ["invisible", "unsignalable"]
    assert "bwrap" in lines[2]  # pid 1 inside is the namespace's init, not tether


# -- nothing survives ----------------------------------------------------------------------------


def test_nothing_survives_the_commands_end(box: Box) -> None:
    token = f"{secrets.randbelow(10**8):08d}"
    command, _ = battery(token)

    done = box.run(command)

    assert done.returncode == 0, done.stderr
    assert (box.workspace / "escaped").exists()
    assert marked(token) == []


def test_nothing_survives_the_commands_timeout(box: Box) -> None:
    token = f"{secrets.randbelow(10**8):08d}"
    command, _ = battery(token)

    done = box.run(f"{command}\nsleep 120", timeout_ms=20_000)

    assert "[timed out after 20000ms]" in done.stdout, done.stdout + done.stderr
    assert (box.workspace / "escaped").exists()
    assert marked(token) == []


def test_nothing_survives_an_abort(box: Box) -> None:
    token = f"{secrets.randbelow(10**8):08d}"
    command, _ = battery(token)
    process = box.start(f"{command}\nsleep 120")
    try:
        wait_for((box.workspace / "escaped").exists, within_s=120, what="the escapes")
        process.send_signal(signal.SIGINT)  # Ctrl-C aborts the call
        _, stderr = process.communicate(timeout=120)
    finally:
        stop(process)

    assert "ABORTED" in stderr
    assert marked(token) == []


def test_a_sigkilled_tether_leaves_no_process_two_seconds_later(box: Box) -> None:
    token = f"{secrets.randbelow(10**8):08d}"
    command, durations = battery(token)
    process = box.start(f"{command}\nsleep 120")
    try:
        wait_for((box.workspace / "escaped").exists, within_s=120, what="the escapes")
        assert len(marked(token)) >= len(durations)  # they run, and bwrap and its init
        process.kill()  # SIGKILL: tether can do nothing more
        process.wait(timeout=60)
        killed = time.monotonic()
        wait_for(lambda: marked(token) == [], within_s=2.0, what="every process gone")
    finally:
        stop(process)
        for found in marked(token):
            found.kill()

    assert time.monotonic() - killed <= 2.0


async def test_an_escape_that_is_running_is_seen_on_the_host_while_the_command_runs(
    box: Box,
) -> None:
    """The sanity check of `marked`: what the assertions above say is gone was there."""
    token = f"{secrets.randbelow(10**8):08d}"
    command, durations = battery(token)
    process = box.start(f"{command}\nsleep 120")
    try:
        await asyncio.to_thread(
            wait_for, (box.workspace / "escaped").exists, within_s=120, what="the escapes"
        )
        running = {" ".join(p.cmdline()) for p in marked(token)}
        assert {f"sleep {d}" for d in durations} <= running
    finally:
        stop(process)


# -- without namespaces ------------------------------------------------------------------------


def test_without_bwrap_a_sandboxed_command_is_refused_in_one_line_that_says_how_to_fix_it(
    tmp_path: Path,
) -> None:
    box = Box(CURRENT, tmp_path)
    for name in ("ws", "home"):
        (tmp_path / name).mkdir()
    env = {**box.env(), "TETHER_BWRAP": ""}

    done = subprocess.run(
        box.argv("touch made"), env=env, capture_output=True, text=True, check=False
    )

    assert done.returncode == 1
    warning, refusal = done.stderr.splitlines()
    assert warning.startswith("tether: processes are not contained ($TETHER_BWRAP is empty). ")
    assert refusal.startswith(
        "tether: SANDBOX_UNAVAILABLE: sandbox unavailable (workspace-write): $TETHER_BWRAP is "
        "empty; install bubblewrap"
    )
    assert refusal.endswith(
        "or pass --sandbox danger-full-access (sandbox: danger-full-access in "
        "tether.yml) to run commands without one"
    )
    assert not (box.workspace / "made").exists()


def test_without_bwrap_full_access_runs_under_the_fallback(tmp_path: Path) -> None:
    box = Box(CURRENT, tmp_path)
    for name in ("ws", "home"):
        (tmp_path / name).mkdir()
    env = {**box.env(), "TETHER_BWRAP": ""}
    argv = [*box.argv("touch made"), "--sandbox", "danger-full-access"]

    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)

    assert done.returncode == 0, done.stderr
    assert (box.workspace / "made").exists()
    assert done.stderr.count("processes are not contained") == 1


# -- MCP stdio servers -----------------------------------------------------------------------------


def test_a_failing_mcp_servers_child_on_its_stdout_neither_delays_tether_nor_outlives_it(
    box: Box,
) -> None:
    duration = f"60.{secrets.randbelow(10**9):09d}"
    script = f"sleep {duration} & echo broken >&2; exit 1"
    entry = {"command": "bash", "args": ["-c", script], "startup_timeout_ms": 60_000}
    (box.workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"broken": entry}}))
    box.user.own(box.workspace)
    argv = box.user.argv([str(TETHER), "mcp", "list", "--cwd", str(box.workspace)])
    began = time.monotonic()

    done = subprocess.run(
        argv, env=box.env(), capture_output=True, text=True, timeout=240, check=False
    )

    assert "broken" in done.stdout + done.stderr
    assert time.monotonic() - began < 45  # the child holds stdout for 60 s
    assert marked(duration) == []

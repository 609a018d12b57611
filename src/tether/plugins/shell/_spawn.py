"""Starting one child process and turning its file descriptors into loop events.

Owns: the pipes (stdout, stderr, and stdin when there is data), `subprocess.Popen` in a new
session, reading output with `loop.add_reader`, writing stdin data without blocking (then
closing it; `EPIPE` from a child that does not read is ignored), and reaping the leader (a
pidfd on Linux, else a daemon thread in `waitpid`). Events reach a `ProcessEvents` receiver on
the loop thread: output chunks, end of each output stream, the leader's exit. Does not own
settlement or termination (`_process.py`).

Why not `asyncio.create_subprocess_exec`: its transports cost several extra loop iterations and
a watcher thread per spawn, and on CPython 3.11 a cancellation during their connection can leave
a transport that never finishes. This module is synchronous to start and has no such window.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import Final, Protocol

__all__ = ["STDERR", "STDOUT", "Launched", "ProcessEvents"]

STDOUT: Final = 1
STDERR: Final = 2
_READ_SIZE: Final = 65536


class ProcessEvents(Protocol):
    """What a launched process reports, always on the loop thread."""

    def on_output(self, stream: int, data: bytes) -> None: ...
    def on_output_closed(self, stream: int) -> None: ...
    def on_exit(self, returncode: int | None) -> None:
        """`returncode` as `Popen.returncode` (negative: killed by that signal); None when the
        status could not be read (someone else reaped the child)."""
        ...


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


class Launched:
    """A started child and the descriptors this process holds for it."""

    __slots__ = ("_events", "_loop", "_pidfd", "_popen", "_readers", "_stdin", "_writing", "pid")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        popen: subprocess.Popen[bytes],
        readers: dict[int, int],
        stdin: tuple[int, memoryview] | None,
        events: ProcessEvents,
    ) -> None:
        self._loop = loop
        self._popen = popen
        self._readers = readers  # fd -> stream
        self._stdin = stdin
        self._writing = False
        self._events = events
        self._pidfd: int | None = None
        self.pid = popen.pid

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        stdin: bytes | None,
        events: ProcessEvents,
        pass_fds: Sequence[int] = (),
    ) -> Launched:
        """Spawn `argv` in a new session (`pass_fds` stay open in the child). Raises `OSError`
        (bad cwd, missing program); no descriptor is leaked then."""
        loop = asyncio.get_running_loop()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if stdin is not None else (-1, -1)
        try:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL if in_r < 0 else in_r,
                stdout=out_w,
                stderr=err_w,
                cwd=cwd,
                env=env,
                start_new_session=True,
                pass_fds=tuple(pass_fds),
            )
        except BaseException:
            for fd in (out_r, err_r, in_w):
                if fd >= 0:
                    _close(fd)
            raise
        finally:
            for fd in (out_w, err_w, in_r):
                if fd >= 0:
                    _close(fd)
        launched = cls(
            loop,
            popen,
            {out_r: STDOUT, err_r: STDERR},
            None if stdin is None else (in_w, memoryview(stdin)),
            events,
        )
        launched._begin()
        return launched

    def _begin(self) -> None:
        loop = self._loop
        for fd in self._readers:
            os.set_blocking(fd, False)
            loop.add_reader(fd, self._readable, fd)
        if self._stdin is not None:
            os.set_blocking(self._stdin[0], False)
            self._write_stdin()
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux, or an old kernel
            threading.Thread(target=self._wait_in_thread, daemon=True).start()
        else:
            loop.add_reader(self._pidfd, self._pidfd_readable)

    # -- output --------------------------------------------------------------------------------

    def _readable(self, fd: int) -> None:
        try:
            data = os.read(fd, _READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        stream = self._readers[fd]
        if data:
            self._events.on_output(stream, data)
        else:
            self._close_reader(fd)

    def _close_reader(self, fd: int) -> None:
        stream = self._readers.pop(fd, None)
        if stream is None:
            return
        self._loop.remove_reader(fd)
        _close(fd)
        self._events.on_output_closed(stream)

    def close_output(self) -> None:
        """Stop reading now; unread output is dropped (the drain bound)."""
        for fd in list(self._readers):
            self._close_reader(fd)

    # -- stdin ---------------------------------------------------------------------------------

    def _write_stdin(self) -> None:
        if self._stdin is None:
            return
        fd, view = self._stdin
        try:
            while view:
                view = view[os.write(fd, view) :]
        except BlockingIOError:
            self._stdin = (fd, view)
            if not self._writing:
                self._writing = True
                self._loop.add_writer(fd, self._write_stdin)
            return
        except OSError:  # EPIPE: the child exited or closed stdin without reading it all
            pass
        self._close_stdin()

    def _close_stdin(self) -> None:
        if self._stdin is None:
            return
        fd = self._stdin[0]
        self._stdin = None
        if self._writing:
            self._writing = False
            self._loop.remove_writer(fd)
        _close(fd)

    # -- exit ----------------------------------------------------------------------------------

    def _pidfd_readable(self) -> None:
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, -1
        if pid == 0:
            return
        self._release_pidfd()
        self._reaped(None if status == -1 else os.waitstatus_to_exitcode(status))

    def _release_pidfd(self) -> None:
        pidfd, self._pidfd = self._pidfd, None
        if pidfd is not None:
            self._loop.remove_reader(pidfd)
            _close(pidfd)

    def _wait_in_thread(self) -> None:
        try:
            _, status = os.waitpid(self.pid, 0)
            code: int | None = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            code = None
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is listening
            self._loop.call_soon_threadsafe(self._reaped, code)

    def _reaped(self, returncode: int | None) -> None:
        self._popen.returncode = 255 if returncode is None else returncode
        self._events.on_exit(returncode)

    # -- teardown ------------------------------------------------------------------------------

    def close(self) -> None:
        """Release every descriptor still held (at settlement)."""
        self.close_output()
        self._close_stdin()

    def kill_and_reap_now(self) -> None:
        """At interpreter exit: SIGKILL the group and reap the leader, synchronously."""
        if self._popen.returncode is not None:
            return
        with contextlib.suppress(OSError):
            os.killpg(self.pid, 9)
        with contextlib.suppress(ChildProcessError, OSError):
            _, status = os.waitpid(self.pid, 0)
            self._popen.returncode = os.waitstatus_to_exitcode(status)
        self._release_pidfd_quietly()

    def _release_pidfd_quietly(self) -> None:
        pidfd, self._pidfd = self._pidfd, None
        if pidfd is not None:
            _close(pidfd)

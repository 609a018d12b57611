"""Starting a stdio MCP server contained: the command line the SDK's `stdio_client` spawns.

Owns `contained_command(config, workspace=...)`: the server's `command` and `args` wrapped in
`bwrap` (`tether.plugins.sandbox.confine`), so the server and every process it starts run in
their own PID namespace that ends when the server exits, when the SDK stops it (closing stdin,
then SIGTERM to bwrap's process group: bwrap dies and takes the namespace with it) or when tether
dies, even by SIGKILL (`--die-with-parent`). So a child of the server that closed its stdio, or
one that holds the server's stdout open, cannot outlive it or keep tether waiting for EOF.

A server is contained but not sandboxed by default (`sandbox: danger-full-access` — it is the
user's own configuration); `sandbox` in its entry (tether.yml's `servers`, or `.mcp.json`, which
Claude Code ignores it in) sandboxes it. bwrap reads the seccomp filter of a sandbox from an
inherited descriptor, which the SDK's spawn does not pass, so the filter is written to a private
file and `/bin/sh` opens it on descriptor 3 just before it `exec`s bwrap. Without namespaces a
full-access server runs as before (the SDK stops its process group) and a sandboxed one fails to
start, saying why. Does not own the transport (`connection.py`).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from ..sandbox.plan import Jail, confine
from ..sandbox.policy import SandboxSettings
from ..sandbox.probe import kernel_support

__all__ = ["ServerCommand", "contained_command"]

_FILTER_FD: Final = 3


@dataclass(frozen=True, slots=True)
class ServerCommand:
    """What to spawn for a server: `command`, `args`, and the `cwd` to give the SDK."""

    command: str
    args: tuple[str, ...]
    cwd: str | None


@contextlib.contextmanager
def contained_command(
    command: str,
    args: tuple[str, ...],
    *,
    cwd: str | None,
    env: Mapping[str, str] | None,
    sandbox: SandboxSettings,
    workspace: str | None,
) -> Iterator[ServerCommand]:
    """The server's command line, contained (see the module note), for the life of the block
    (a sandboxed server's root locks are held until it ends). Raises `FileNotFoundError` for a
    command that is not found and `SandboxUnavailable` for a sandbox that cannot be had."""
    base = workspace or os.getcwd()
    workdir = os.path.join(base, cwd) if cwd is not None else base
    path = (env or {}).get("PATH", os.environ.get("PATH", os.defpath))
    if os.sep in command:
        found = os.path.exists(os.path.join(workdir, command))
    else:
        found = shutil.which(command, path=path) is not None
    if not found:  # inside bwrap, a missing program would only be an exit code
        raise FileNotFoundError(2, "command not found", command)
    jail = confine(
        [command, *args],
        policy=sandbox.policy(base),
        workspace=base,
        workdir=workdir,
        support=kernel_support(),
    )
    if jail is None:
        yield ServerCommand(command, args, cwd)
        return
    try:
        argv = _without_inherited_descriptors(jail)
        yield ServerCommand(argv[0], tuple(argv[1:]), workdir)
    finally:
        jail.release()


def _without_inherited_descriptors(jail: Jail) -> list[str]:
    """`jail.argv`, or, when bwrap needs the filter's descriptor, `/bin/sh` opening the filter
    file on descriptor 3 and `exec`ing bwrap told to read it there."""
    if not jail.pass_fds:
        return jail.argv
    (pipe,) = jail.pass_fds
    program = os.read(pipe, 1 << 16)
    jail.spawned()
    argv = list(jail.argv)
    at = argv.index("--seccomp")
    argv[at + 1] = str(_FILTER_FD)
    return ["/bin/sh", "-c", f'exec "$@" {_FILTER_FD}<"$0"', _filter_file(program), *argv]


def _filter_file(program: bytes) -> str:
    """A private, read-only file holding `program` (one per distinct filter and process)."""
    directory = _private_directory()
    path = os.path.join(directory, hashlib.sha256(program).hexdigest()[:16] + ".bpf")
    if not os.path.exists(path):
        fd, temp = tempfile.mkstemp(dir=directory)
        with os.fdopen(fd, "wb") as file:
            file.write(program)
        os.chmod(temp, 0o400)
        os.replace(temp, path)
    return path


_directory: str | None = None


def _private_directory() -> str:
    global _directory
    if _directory is None or not os.path.isdir(_directory):
        _directory = tempfile.mkdtemp(prefix="tether-seccomp-")
        atexit.register(shutil.rmtree, _directory, True)
    return _directory

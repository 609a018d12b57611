"""Recognizing a command that failed because of its sandbox, and saying so.

Owns `sandbox_denial(policy, exit_code=..., output=...)`: for a command that ran sandboxed and
failed (a nonzero exit or a signal), the first line of its output that reads like what the
sandbox does to a command — `Read-only file system` (EROFS: a write outside the writable roots
or to a protected path), `Permission denied` / `Operation not permitted` (EACCES / EPERM: a
placeholder, the seccomp filter, a dropped capability) and, without network access, the usual
texts of a missing network (`Network is unreachable`, a name that does not resolve, a refused
connection to a host service) — turned into one note for the result:

    this may have failed because of the sandbox (workspace-write): "touch: cannot touch
    '/root/x': Read-only file system"; it may write only in /work/ws and a private /tmp,
    and has no network

It is a heuristic, like Codex's: the same texts can have other causes, hence "may". Does not own
what follows (the bash tool tells the model, and asks the user to run it once outside the
sandbox where someone can answer).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Final

from .policy import SandboxMode, SandboxPolicy

__all__ = ["sandbox_denial"]


@functools.cache
def _filesystem() -> re.Pattern[str]:
    return re.compile(
        r"read-only file system|permission denied|operation not permitted|\bEROFS\b|\bEACCES\b"
        r"|\bEPERM\b",
        re.IGNORECASE,
    )


@functools.cache
def _network() -> re.Pattern[str]:
    return re.compile(
        r"network is unreachable|temporary failure in name resolution|could not resolve host"
        r"|name or service not known|no address associated with hostname|name resolution"
        r"|failed to establish a new connection|connection refused|\bENETUNREACH\b"
        r"|\bEAI_AGAIN\b|getaddrinfo",
        re.IGNORECASE,
    )


_QUOTE_MAX: Final = 200


def sandbox_denial(
    policy: SandboxPolicy,
    *,
    exit_code: int | None,
    output: str,
    writable: Sequence[str] = (),
) -> str | None:
    """The note for a failed sandboxed command whose `output` suggests the sandbox stopped it
    (see the module note), else None. `writable`: the roots it may write (for the note)."""
    if not policy.sandboxed or exit_code == 0:
        return None
    patterns = [_filesystem()] if policy.network else [_filesystem(), _network()]
    for line in output.splitlines():
        if any(pattern.search(line) for pattern in patterns):
            quoted = line.strip()
            if len(quoted) > _QUOTE_MAX:
                quoted = quoted[: _QUOTE_MAX - 1] + "…"
            return (
                f"this may have failed because of the sandbox ({policy.describe()}): "
                f'"{quoted}"; {_allowed(policy, writable)}'
            )
    return None


def _allowed(policy: SandboxPolicy, writable: Sequence[str]) -> str:
    if policy.mode is SandboxMode.READ_ONLY or not writable:
        where = "it may write only in a private /tmp"
    else:
        where = f"it may write only in {', '.join(writable)} and a private /tmp"
    protected = (
        " (not .git — a commit needs to run outside —, .claude, .mcp.json, tether.yml, .tether"
        " or the other protected paths: docs/sandbox.md)"
        if policy.mode is SandboxMode.WORKSPACE_WRITE
        else ""
    )
    network = ", and has network access" if policy.network else ", and has no network"
    return where + protected + network

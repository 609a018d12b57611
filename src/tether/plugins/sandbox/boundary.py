"""May the model write this path under this policy? The file tools' side of the sandbox.

Owns `check_write(policy, workspace, path)`: the one answer, for a file a tool (`write`, `edit`)
would create or replace on the model's behalf, to the question a sandboxed command's mounts
answer for `bash` — computed from the policy value and `protected.protected_paths`, never from a
list of its own:

    read-only           nothing may be written
    workspace-write     only inside a writable root (the workspace and the policy's
                        `writable_roots`), and never a protected path or anything under one
                        (`protected_paths(root)` of every root the path is in; a protected
                        path that is a link protects where it points as well)
    danger-full-access  anything (the user chose to leave the sandbox; as for bash)

`path` must be absolute and free of symbolic links (a real path): the caller then writes it
*beneath* the root this names, through that root's directory descriptor and without following
any link (`tether.plugins.fs.beneath`), so what was checked is what is written. Permission
rules, `--yolo` and a policy's `non_interactive` answer never change the verdict; only a person
answering a `sandbox-escalation` question lets one refused write through (the fs tools ask).

Does not own the protected set (`protected.py`), the mounts (`bwrap.py`) or any I/O beyond the
`lstat`s `protected_paths` makes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Final

from .policy import SandboxMode, SandboxPolicy
from .protected import protected_paths

__all__ = ["FILESYSTEM_ROOT", "WriteCheck", "check_write", "writable_roots"]

FILESYSTEM_ROOT: Final = "/"
"""The root a write outside every writable root is made beneath (full access, an escalation)."""


@dataclass(frozen=True, slots=True)
class WriteCheck:
    """The verdict on one path. `root`: the writable root it lies in (the outermost one, when
    roots nest), or `FILESYSTEM_ROOT` when it lies in none; `refusal`: why the model may not
    write it (None: it may), a phrase that completes `cannot write "<path>": ...`."""

    path: str
    root: str
    refusal: str | None = None

    @property
    def allowed(self) -> bool:
        return self.refusal is None


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def writable_roots(policy: SandboxPolicy, workspace: str) -> tuple[str, ...]:
    """The real paths a command under `policy` may write (besides its private /tmp): none in
    `read-only`, the workspace and `writable_roots` otherwise (full access writes anywhere)."""
    if policy.mode is SandboxMode.READ_ONLY:
        return ()
    roots = (_real(workspace), *(_real(root) for root in policy.writable_roots))
    return tuple(dict.fromkeys(roots))


def _within(top: str, path: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def check_write(policy: SandboxPolicy, workspace: str, path: str) -> WriteCheck:
    """Whether the model may write the file at the real, absolute `path` (see the module note).
    Raises ValueError for a relative `path`."""
    if not os.path.isabs(path):
        raise ValueError(f"check_write needs an absolute path, not {path!r}")
    path = os.path.normpath(path)
    roots = [root for root in writable_roots(policy, workspace) if _within(root, path)]
    # the outermost root: a root nested in another could be swapped for a link by a write in
    # the outer one, while nothing the model can write lies above the outermost
    root = min(roots, key=len) if roots else FILESYSTEM_ROOT
    if policy.mode is SandboxMode.DANGER_FULL_ACCESS:
        return WriteCheck(path, root)
    if policy.mode is SandboxMode.READ_ONLY:
        return WriteCheck(path, root, "the sandbox is read-only (read-only mode writes nothing)")
    if not roots:
        where = ", ".join(writable_roots(policy, workspace))
        return WriteCheck(path, root, f"it is outside the sandbox's writable roots ({where})")
    for top in roots:
        for protection in protected_paths(top):
            named = os.path.normpath(protection.path)
            # a protected path that is a link protects its target too (bwrap binds the target)
            protected = next((p for p in (named, _real(named)) if _within(p, path)), None)
            if protected is not None:
                shown = os.path.relpath(named, top) if _within(top, named) else named
                return WriteCheck(
                    path,
                    root,
                    f"{shown} is protected by the sandbox (a file a program outside the sandbox"
                    " trusts later: git, tether and agent settings)",
                )
    return WriteCheck(path, root)

"""The paths inside writable roots that stay read-only: the one source of the protected set.

Owns `protected_paths(root)`: in a writable root (the workspace, a configured `writable_roots`
entry) the paths a sandboxed command may not write, because something outside the sandbox reads
or runs them *later* — the user's git, shell, ssh, editor, Claude Code, tether itself:

    .git                    all of it (Codex's rule): hooks, config, objects/info/alternates,
                            modules/, worktrees/, HEAD, refs. When `.git` is a file (a worktree
                            or submodule checkout), that file and the repository directories it
                            names (its gitdir and commondir), whole
    .claude/  .mcp.json     Claude Code's and tether's hooks, permission rules, MCP servers
    tether.yml  .tether/    tether's plugins, sandbox setting, project home
    submodules' .git        for each `path` of `.gitmodules` whose directory exists
    git's configuration     what `gitconfig.py` finds for the root: included files (every
                            `include.path` / `includeIf.*.path`), `core.hooksPath` (husky's
                            `.husky/`), and the files git runs (`core.fsmonitor`,
                            `core.sshCommand`, `core.pager`, filter and diff drivers, ...)
    launchers               the files `.mcp.json`'s servers and `.claude/settings*.json`'s hooks
                            run from (`launchers.py`)
    the user's home         when it lies inside the root (a workspace that is `$HOME`, or
                            contains it): `$TETHER_HOME` (default `~/.tether`), `~/.gitconfig`,
                            `~/.config/git`, `~/.ssh`, `~/.local/bin`, `~/.claude`,
                            `~/.claude.json`, the shell start-up files (`.bashrc`, `.bash_login`,
                            `.bash_profile`, `.bash_logout`, `.profile`, `.zshrc`, `.zprofile`,
                            `.zshenv`, `.zlogin`, `.zlogout`, `.cshrc`, `.tcshrc`, `.login`,
                            `~/.config/fish`)

and, when they exist (a placeholder for each would be clutter): `.gitmodules`, `.vscode/`,
`.idea/`, and the shell start-up file names in the root itself.

A protected path that does not exist would be as good as writable (a command creates it), so it
is *pinned*: `Protection.missing` says so, and `placeholders.py` makes an empty directory there
for the command's life (named here by its first missing component, once; a placeholder met on the
way is protected itself). A protected path reached through a symlink is protected at its target
(a mount cannot pin the link itself: mount(2) follows it; docs/sandbox.md); a dangling one is
left out. Paths inside another protected path are left out (the outer one covers them).
`anchors(root, protections)` are the directories between a root and its protected paths:
bound onto themselves so that they are mount points, which the kernel refuses to rename or remove
(`EBUSY`) — without that, `mv .husky x` (or the directory above a submodule) would carry the
read-only mount away and leave the name free for a new one. `home_warning(workspace)` is the one
line for a workspace that is the user's home (all of it writable but these paths). Does not own
the placeholders (`placeholders.py`) or the mounts (`bwrap.py`).
"""

from __future__ import annotations

import enum
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from ...kernel.config import tether_home
from .gitconfig import git_directory, git_targets, read_entries
from .launchers import launcher_files

__all__ = [
    "HOME_PROTECTED",
    "PLACEHOLDER_MODE",
    "PROTECTED_IF_PRESENT",
    "PROTECTED_NAMES",
    "Kind",
    "Protection",
    "anchors",
    "home_warning",
    "is_placeholder",
    "protected_paths",
    "within",
]


class Kind(enum.Enum):
    """What a missing protected path would be (its placeholder is an empty directory either way:
    git shows no empty directory, so `git status` never lists one)."""

    DIRECTORY = "directory"
    FILE = "file"


PROTECTED_NAMES: Final[tuple[tuple[str, Kind], ...]] = (
    (".git", Kind.DIRECTORY),
    (".claude", Kind.DIRECTORY),
    (".mcp.json", Kind.FILE),
    ("tether.yml", Kind.FILE),
    (".tether", Kind.DIRECTORY),
)
"""Relative to each writable root: protected, and pinned when missing."""

_SHELL_FILES: Final = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".login",
)

HOME_PROTECTED: Final[tuple[tuple[str, Kind], ...]] = (
    (".tether", Kind.DIRECTORY),
    (".gitconfig", Kind.FILE),
    (".config/git", Kind.DIRECTORY),
    (".ssh", Kind.DIRECTORY),
    (".local/bin", Kind.DIRECTORY),
    (".claude", Kind.DIRECTORY),
    (".claude.json", Kind.FILE),
    (".config/fish", Kind.DIRECTORY),
    *((name, Kind.FILE) for name in _SHELL_FILES),
)
"""Relative to `$HOME`: protected, and pinned when missing, when inside a writable root."""

PROTECTED_IF_PRESENT: Final[tuple[str, ...]] = (".gitmodules", ".vscode", ".idea", *_SHELL_FILES)
"""Relative to each writable root: protected when they exist, never pinned."""

_MAX_LINKS: Final = 8

PLACEHOLDER_MODE: Final = 0o1700
"""A placeholder is an empty directory with exactly this mode (owner-writable: a `git init` over
one a killed tether left works, as any user)."""


@dataclass(frozen=True, slots=True)
class Protection:
    """A path to keep read-only; `missing` is what would be there when it does not exist (then a
    placeholder pins it; None: it exists)."""

    path: str
    missing: Kind | None = None


def protected_paths(root: str, environ: Mapping[str, str] | None = None) -> list[Protection]:
    """The protections of one writable root (an absolute, resolved directory), in mount order
    (see the module note). `environ` (default `os.environ`) gives `HOME`, `TETHER_HOME` and git's
    configuration variables."""
    env = os.environ if environ is None else environ
    home = os.path.realpath(env.get("HOME") or os.path.expanduser("~"))
    found: list[Protection | None] = []
    git = os.path.join(root, ".git")
    if os.path.isfile(git) and not os.path.islink(git):
        found.append(Protection(git))
        found += [Protection(path) for path in git_directory(root) if os.path.isdir(path)]
    else:
        found.append(_walk(root, ".git", Kind.DIRECTORY))
    found += [_walk(root, name, kind) for name, kind in PROTECTED_NAMES[1:]]
    for submodule in _submodules(root):
        found.append(_walk(root, f"{submodule}/.git", Kind.DIRECTORY))
        found += [Protection(path) for path in git_directory(os.path.join(root, submodule))]
    targets = git_targets(root, env)
    for path in targets.files:
        found.append(_walk_to(root, path, Kind.FILE))
    for path in targets.directories:
        found.append(_walk_to(root, path, Kind.DIRECTORY))
    for path in (*targets.programs, *launcher_files(root, home)):
        if within(path, root):
            found.append(_walk_to(root, path, Kind.FILE))
    for name, kind in HOME_PROTECTED:
        found.append(_walk_to(root, os.path.join(home, name), kind))
    found.append(_walk_to(root, os.path.realpath(tether_home(env)), Kind.DIRECTORY))
    for name in PROTECTED_IF_PRESENT:
        path = os.path.join(root, name)
        if os.path.lexists(path):
            found.append(_walk(root, name, Kind.FILE))
    return _outermost(protection for protection in found if protection is not None)


def anchors(root: str, protections: Iterable[Protection]) -> list[str]:
    """The directories strictly between `root` and each protected path inside it, shallowest
    first, that are not inside a protected path (see the module note)."""
    kept = list(protections)
    found: list[str] = []
    for protection in kept:
        if not within(protection.path, root) or protection.path == root:
            continue
        path = os.path.dirname(protection.path)
        chain: list[str] = []
        while path != root and within(path, root):
            chain.append(path)
            path = os.path.dirname(path)
        for directory in reversed(chain):
            if directory in found or any(within(directory, p.path) for p in kept):
                continue
            if os.path.isdir(directory) and not os.path.islink(directory):
                found.append(directory)
    return found


def is_placeholder(path: str) -> bool:
    """A placeholder: a directory with mode `PLACEHOLDER_MODE` (its emptiness is checked by
    `rmdir` when it is removed)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == PLACEHOLDER_MODE


_home_warned: set[str] = set()


def home_warning(workspace: str) -> str | None:
    """The one line, once per process and workspace, for a `workspace-write` workspace that is the
    user's home directory (everything in it but the protected paths is writable); else None."""
    resolved = os.path.realpath(workspace)
    home = os.path.realpath(os.environ.get("HOME") or os.path.expanduser("~"))
    if resolved != home or resolved in _home_warned:
        return None
    _home_warned.add(resolved)
    return (
        f"tether: the workspace is your home directory ({resolved}): sandboxed commands may write "
        "everything in it but the protected paths (~/.tether, ~/.gitconfig, ~/.ssh, shell "
        "start-up files, ~/.local/bin, ...; docs/sandbox.md); start tether in a project "
        "directory to keep the rest of your home out of reach"
    )


def within(path: str, root: str) -> bool:
    """`path` is `root` or below it (both normalized, absolute)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def _walk_to(root: str, path: str, kind: Kind, depth: int = 0) -> Protection | None:
    """`_walk` for an absolute path; None when it is not strictly inside `root`."""
    path = os.path.normpath(path)
    if path == root or not within(path, root):
        return None
    return _walk(root, os.path.relpath(path, root), kind, depth)


def _walk(root: str, name: str, kind: Kind, depth: int = 0) -> Protection | None:
    """The protection for `root/name`: the path when it exists, its first missing component to
    pin, a placeholder on the way, or through a symlink its target (pinned the same way when it
    is missing inside the root; None when it is missing outside, where no command can create
    it); None when a file stands where a directory would be (nothing can be made below it)."""
    parts = name.split("/")
    path = root
    for index, part in enumerate(parts):
        path = os.path.join(path, part)
        last = index == len(parts) - 1
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return Protection(path, kind if last else Kind.DIRECTORY)
        except OSError:
            return None
        if stat.S_ISLNK(info.st_mode):
            target = os.path.realpath(os.path.join(path, *parts[index + 1 :]))
            if os.path.exists(target):
                return Protection(target)
            return _walk_to(root, target, kind, depth + 1) if depth < _MAX_LINKS else None
        if is_placeholder(path) or last:
            return Protection(path)
        if not stat.S_ISDIR(info.st_mode):
            return None
    return Protection(path)


def _submodules(root: str) -> list[str]:
    """The `path`s of `root/.gitmodules` that are directories inside the root."""
    found: list[str] = []
    for key, value in read_entries(os.path.join(root, ".gitmodules")):
        if not (key.startswith("submodule.") and key.endswith(".path")):
            continue
        relative = os.path.normpath(value.strip())
        path = os.path.join(root, relative)
        if relative.startswith("..") or os.path.isabs(relative) or relative == ".":
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            found.append(relative)
    return found


def _outermost(protections: Iterable[Protection]) -> list[Protection]:
    """Each path once (first wins), without those inside another protected path."""
    unique: dict[str, Protection] = {}
    for protection in protections:
        unique.setdefault(protection.path, protection)
    paths = list(unique)
    return [
        protection
        for path, protection in unique.items()
        if not any(other != path and within(path, other) for other in paths)
    ]

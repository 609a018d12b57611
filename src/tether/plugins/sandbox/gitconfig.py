"""What git's configuration makes git run or read, found by reading the files, never by running git.

Owns `git_targets(root, environ)`: for a writable root, the paths the user's git (run on the
host, later) reads as configuration or runs as a program, so that `protected.py` keeps those that
lie inside a writable root read-only:

- `files`: every configuration file git reads there, includes followed: the system file
  (`$GIT_CONFIG_SYSTEM`, else `/etc/gitconfig`, unless `$GIT_CONFIG_NOSYSTEM`), the global ones
  (`$GIT_CONFIG_GLOBAL`, else `$XDG_CONFIG_HOME/git/config` and `~/.gitconfig`), the repository's
  `config` and `config.worktree` (of the repository at the root, or the one enclosing it), and the
  targets of every `include.path` and `includeIf.<condition>.path`, *whatever the condition* (a
  condition false today can be true tomorrow);
- `directories`: `core.hooksPath`;
- `programs`: the files named by the values git runs as commands (`core.fsmonitor`,
  `core.sshCommand`, `core.pager`, `core.editor`, `core.askPass`, `sequence.editor`, `pager.*`,
  `filter.*.clean|smudge|process`, `diff.*.command|textconv`, `merge.*.driver`,
  `difftool.*.cmd`, `mergetool.*.cmd`, `credential.helper`, `gpg.program`, `gpg.*.program`,
  `interactive.diffFilter`, `!` aliases) that exist.

Why parse instead of `git config --list --show-origin`: `confine()` runs on the event loop's
thread before every command, and a process there would block the loop (with a timeout to choose
and a policy for a git that is missing or slow); reading a few small files cannot run anything.
Reading more than git would (every include, whatever its condition; both global files) only
protects more. A line this parser does not understand is skipped: git itself refuses a file with
such a line, and runs nothing from it. Does not own the protections themselves (`protected.py`).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["GitTargets", "command_files", "git_directory", "git_targets", "read_entries"]

_MAX_FILES: Final = 64
_SECTION: Final = re.compile(r'\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_KEY: Final = re.compile(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*(=?)")
_COMMANDS: Final = re.compile(
    r"core\.(fsmonitor|sshcommand|pager|editor|askpass)|sequence\.editor|pager\..+"
    r"|filter\..+\.(clean|smudge|process)|diff\..+\.(command|textconv)|merge\..+\.driver"
    r"|(diff|merge)tool\..+\.cmd|credential\.(.+\.)?helper|gpg\.(.+\.)?program"
    r"|interactive\.difffilter|alias\..+"
)
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")
_UNESCAPE: Final = re.compile(r"\\(.)")
_FALSE_OR_TRUE: Final = frozenset({"", "true", "false", "yes", "no", "on", "off", "0", "1"})


@dataclass(frozen=True, slots=True)
class GitTargets:
    """What git reads or runs for a root (see the module note); absolute, normalized paths."""

    files: tuple[str, ...] = ()
    directories: tuple[str, ...] = ()
    programs: tuple[str, ...] = ()


def git_directory(top: str) -> tuple[str, ...]:
    """The repository directories of the worktree at `top`: its `.git` directory, or what a
    `.git` file names (`gitdir:`) and that directory's `commondir`; () when there is none."""
    git = os.path.join(top, ".git")
    if os.path.isdir(git):
        return (git,)
    try:
        with open(git, encoding="utf-8") as file:
            first = file.readline().strip()
    except (OSError, UnicodeDecodeError, ValueError):
        return ()
    if not first.startswith("gitdir:"):
        return ()
    gitdir = os.path.normpath(os.path.join(top, first.removeprefix("gitdir:").strip()))
    directories = [gitdir]
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as file:
            common = file.readline().strip()
    except (OSError, UnicodeDecodeError, ValueError):
        common = ""
    if common:
        directories.append(os.path.normpath(os.path.join(gitdir, common)))
    return tuple(directories)


def git_targets(root: str, environ: Mapping[str, str]) -> GitTargets:
    """The configuration files, hook directories and programs of git for `root` (see the module
    note)."""
    top = _worktree(root)
    home = environ.get("HOME") or os.path.expanduser("~")
    queue: list[str] = []
    if "GIT_CONFIG_NOSYSTEM" not in environ:
        queue.append(environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    if environ.get("GIT_CONFIG_GLOBAL"):
        queue.append(environ["GIT_CONFIG_GLOBAL"])
    else:
        xdg = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        queue += [os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]
    for directory in git_directory(top) if top is not None else ():
        queue += [os.path.join(directory, "config"), os.path.join(directory, "config.worktree")]
    base = top if top is not None else root
    entries = list(_environment_entries(environ))
    files: list[str] = []
    while queue and len(files) < _MAX_FILES:
        path = os.path.normpath(_expand(queue.pop(0), home, base))
        if path in files:
            continue
        files.append(path)
        for key, value in read_entries(path):
            if _is_include(key):
                queue.append(_expand(value, home, os.path.dirname(path)))
            else:
                entries.append((key, value))
    directories: list[str] = []
    programs: list[str] = []
    for key, value in entries:
        if key == "core.hookspath":
            directories.append(os.path.normpath(_expand(value, home, base)))
        elif _COMMANDS.fullmatch(key) and value.strip().lower() not in _FALSE_OR_TRUE:
            programs += command_files(value.removeprefix("!"), base, home)
    return GitTargets(tuple(files), tuple(directories), tuple(programs))


def command_files(command: str, base: str, home: str) -> list[str]:
    """The existing files a shell command line names (each word with a `/`, or that exists
    relative to `base`, where the command runs), as normalized absolute paths."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    found: list[str] = []
    for raw in words:
        word = raw.split("=", 1)[1] if _ASSIGNMENT.fullmatch(raw) else raw
        if not word or word.startswith("-"):
            continue
        path = os.path.normpath(_expand(word, home, base))
        pathlike = "/" in word or word.startswith(".")
        if os.path.lexists(path) and (pathlike or os.path.isfile(path)):
            found.append(path)
    return found


def _worktree(root: str) -> str | None:
    """The top of the worktree git uses at `root`: `root` or the nearest parent with `.git`."""
    path = root
    while True:
        if os.path.lexists(os.path.join(path, ".git")):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def _expand(value: str, home: str, base: str) -> str:
    if value == "~" or value.startswith("~/"):
        value = home + value[1:]
    return value if os.path.isabs(value) else os.path.join(base, value)


def _is_include(key: str) -> bool:
    return key == "include.path" or (key.startswith("includeif.") and key.endswith(".path"))


def _environment_entries(environ: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """`GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_<n>` / `GIT_CONFIG_VALUE_<n>`."""
    try:
        count = int(environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        return
    for index in range(max(0, min(count, 1000))):
        key = environ.get(f"GIT_CONFIG_KEY_{index}")
        if key is not None:
            yield _normal_key(key), environ.get(f"GIT_CONFIG_VALUE_{index}", "")


def _normal_key(key: str) -> str:
    """Section and variable names are case-insensitive, a subsection is not; `includeIf`'s
    condition is kept as written (it is only ever matched by its ends here)."""
    section, _, rest = key.partition(".")
    head, _, variable = rest.rpartition(".")
    return ".".join(part for part in (section.lower(), head, variable.lower()) if part)


def read_entries(path: str) -> list[tuple[str, str]]:
    """The `(section[.subsection].key, value)` pairs of one config file ([] when unreadable)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            text = file.read(1 << 20)
    except OSError:
        return []
    entries: list[tuple[str, str]] = []
    section = ""
    lines = iter(text.splitlines())
    for physical in lines:
        line = physical
        while True:
            header = _SECTION.match(line)
            if header is None:
                break
            name, sub = header.group(1).lower(), header.group(2)
            if sub is not None:
                section = name + "." + _UNESCAPE.sub(r"\1", sub)
            elif "." in name:  # the deprecated [section.subsection]
                head, _, rest = name.partition(".")
                section = f"{head}.{rest}"
            else:
                section = name
            line = line[header.end() :]
        stripped = line.strip()
        if not stripped or stripped[0] in "#;" or not section:
            continue
        key = _KEY.match(line)
        if key is None:
            continue
        if not key.group(2):
            entries.append((f"{section}.{key.group(1).lower()}", "true"))
            continue
        value, raw = "", line[key.end() :]
        while True:
            part, more = _value(raw)
            value += part
            if not more:
                break
            raw = next(lines, "")
        entries.append((f"{section}.{key.group(1).lower()}", value.strip()))
    return entries


def _value(raw: str) -> tuple[str, bool]:
    """One physical line of a value, unquoted and unescaped; True when it continues on the
    next line (a trailing backslash)."""
    out: list[str] = []
    quoted = False
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\\":
            if index + 1 == len(raw):
                return "".join(out), True
            escaped = raw[index + 1]
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(escaped, escaped))
            index += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out), False

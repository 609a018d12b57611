"""Bash commands that only read, which the default permission mode runs without asking.

Owns `READ_ONLY_COMMANDS` (the documented list, docs/policy.md) and `read_only_command`, which
decides from the parsed line (`tether.plugins.permissions.command_line`), never from a prefix of
its text. A line is read-only when every simple command in it is — those inside substitutions,
subshells, groups, loops and here-documents included — and:

  * it was read completely (no unterminated quote, no `case`...);
  * no command has a `NAME=value` prefix (`GIT_EXTERNAL_DIFF=x git diff` runs x) and no word's
    value is unknown before it runs (`$VAR`, `$(...)`, a brace expansion) — except a plain
    glob (`*.py`) for a command whose entry has nothing to refuse, checked as a path;
  * no redirection writes a file (`> out`, `>> log`, `&> f`; `2>/dev/null` and `2>&1` are fine);
  * every command is in the list with arguments its entry allows: no flag that writes, runs a
    program or changes state (`find -exec`/`-delete`, `sort -o`, `git diff --output`, `rg
    --pre`, `fd -x`...; a long flag is refused by any unambiguous abbreviation too, a short one
    inside a cluster too: `sort -ro`), no unquoted glob or brace for a command whose entry has
    such flags (a file named `-delete` matched by `find *` would be one), and for `git` a
    read-only subcommand (`status`, `diff`, `log`, `show`, listing forms of `branch`/`tag`...);
  * every path it names stays in the workspace, from every directory the line may be in (its
    `workdir` and each `cd` target, a `cd` in a subshell included): an absolute path, `~`, or a
    `..` that leaves the workspace makes it ask (as the `read` tool is confined to the
    workspace), as does a `cd` out of it or a `workdir` outside it.

Chains and pipelines of read-only commands are read-only (`git status && git diff | head`);
one other command makes the whole line ask. Everything else asks as before. Git reads the
repository's configuration, which can name programs (`core.pager`, `diff.external`): the list
assumes the workspace's repository is the user's own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .command_line import SimpleCommand, Word

__all__ = ["READ_ONLY_COMMANDS", "ReadOnly", "read_only_command"]


@dataclass(frozen=True, slots=True)
class ReadOnly:
    """What makes a use of a command not read-only. `flags`: refused flags — `--long` (and its
    abbreviations), `-x` (a short flag, also inside a cluster), `-word` (find's single-dash
    words, exact); `max_args`: how many operands at most (`uniq IN OUT` writes OUT);
    `operands`: a test each operand must pass; `needs`: one of these flags must be present;
    `subcommands` (git): the first operand must be one of them, checked by its own entry."""

    flags: frozenset[str] = frozenset()
    max_args: int | None = None
    operands: Callable[[str], bool] | None = None
    needs: frozenset[str] = frozenset()
    operands_need: frozenset[str] = frozenset()
    """Operands are allowed only with one of these flags (`git branch --list PATTERN`)."""
    subcommands: Mapping[str, ReadOnly] | None = field(default=None)
    paths: bool = True
    """Whether operands are checked as paths that must stay in the workspace: every operand
    of every command but those that print their text (`echo`, `date`...), since a search
    pattern is told from a path only by where it sits; a pattern that looks like a path out
    of the workspace (`/etc`) makes it ask."""

    @property
    def strict(self) -> bool:
        """Entries with something to refuse refuse globs too."""
        return bool(
            self.flags
            or self.max_args is not None
            or self.operands is not None
            or self.operands_need
            or self.subcommands
        )


def _flags(*names: str) -> frozenset[str]:
    return frozenset(names)


_PLAIN: Final = ReadOnly()
_TEXT: Final = ReadOnly(paths=False)
_GIT_OUTPUT: Final = _flags("--output", "--ext-diff", "--textconv")
_GIT: Final[Mapping[str, ReadOnly]] = {
    "status": ReadOnly(),
    "diff": ReadOnly(flags=_GIT_OUTPUT),
    "log": ReadOnly(flags=_GIT_OUTPUT),
    "show": ReadOnly(flags=_GIT_OUTPUT),
    "blame": ReadOnly(flags=_flags("--contents")),
    "shortlog": ReadOnly(),
    "describe": ReadOnly(),
    "rev-parse": ReadOnly(),
    "ls-files": ReadOnly(),
    "ls-tree": ReadOnly(),
    "grep": ReadOnly(flags=_flags("-O", "--open-files-in-pager", "--ext-grep")),
    "branch": ReadOnly(
        flags=_flags(
            "-d",
            "-D",
            "-m",
            "-M",
            "-c",
            "-C",
            "-f",
            "-u",
            "-t",
            "--delete",
            "--move",
            "--copy",
            "--force",
            "--set-upstream-to",
            "--unset-upstream",
            "--edit-description",
            "--track",
            "--no-track",
            "--create-reflog",
        ),
        operands_need=_flags("-l", "--list"),
    ),
    "tag": ReadOnly(
        flags=_flags(
            "-a",
            "-s",
            "-u",
            "-f",
            "-d",
            "-m",
            "-F",
            "-e",
            "--annotate",
            "--sign",
            "--local-user",
            "--force",
            "--delete",
            "--message",
            "--file",
            "--edit",
            "--create-reflog",
        ),
        operands_need=_flags("-l", "--list"),
    ),
    "remote": ReadOnly(max_args=0),
    "stash": ReadOnly(subcommands={"list": ReadOnly(), "show": ReadOnly(flags=_GIT_OUTPUT)}),
}


def _date_format(word: str) -> bool:
    return word.startswith("+")


READ_ONLY_COMMANDS: Final[Mapping[str, ReadOnly]] = {
    # listing and reading files
    "ls": _PLAIN,
    "cat": _PLAIN,
    "head": _PLAIN,
    "tail": _PLAIN,
    "wc": _PLAIN,
    "file": _PLAIN,
    "stat": _PLAIN,
    "du": _PLAIN,
    "df": _PLAIN,
    "nl": _PLAIN,
    "od": _PLAIN,
    "hexdump": _PLAIN,
    "strings": _PLAIN,
    "md5sum": _PLAIN,
    "sha1sum": _PLAIN,
    "sha256sum": _PLAIN,
    "sha512sum": _PLAIN,
    "cksum": _PLAIN,
    "tree": ReadOnly(flags=_flags("-o", "--output")),
    "realpath": _PLAIN,
    "readlink": _PLAIN,
    "basename": _TEXT,
    "dirname": _TEXT,
    "pwd": _PLAIN,
    "cd": _PLAIN,
    # searching
    "grep": _PLAIN,
    "egrep": _PLAIN,
    "fgrep": _PLAIN,
    "rg": ReadOnly(flags=_flags("--pre")),
    "find": ReadOnly(
        flags=_flags(
            "-exec",
            "-execdir",
            "-ok",
            "-okdir",
            "-delete",
            "-fls",
            "-fprint",
            "-fprint0",
            "-fprintf",
        )
    ),
    "fd": ReadOnly(flags=_flags("-x", "-X", "--exec", "--exec-batch")),
    # comparing and filtering text
    "diff": _PLAIN,
    "cmp": _PLAIN,
    "comm": _PLAIN,
    "cut": _PLAIN,
    "sort": ReadOnly(flags=_flags("-o", "--output", "--compress-program")),
    "uniq": ReadOnly(max_args=1),
    "tr": _TEXT,
    "column": _PLAIN,
    "fold": _PLAIN,
    "rev": _PLAIN,
    "jq": _PLAIN,
    # printing and facts about the system
    "echo": _TEXT,
    "printf": _TEXT,
    "true": _TEXT,
    "false": _TEXT,
    "seq": _TEXT,
    "which": _TEXT,
    "whoami": _TEXT,
    "id": _TEXT,
    "uname": _TEXT,
    "hostname": ReadOnly(max_args=0, flags=_flags("-F", "--file", "-b", "--boot")),
    "date": ReadOnly(flags=_flags("-s", "--set", "-f", "--file"), operands=_date_format),
    # version control
    "git": ReadOnly(subcommands=_GIT),
}
"""Command name → what its read-only use may not contain (see `ReadOnly`)."""


def read_only_command(
    command: str,
    *,
    workspace: Path,
    workdir: str | None = None,
    allowed: Callable[[SimpleCommand], bool] | None = None,
) -> bool:
    """Whether the bash line `command`, run in `workdir` (relative to `workspace`; None: the
    workspace), only reads (see the module note) — but for the simple commands `allowed` says
    an allow rule covers (`git status && npm test` with `Bash(npm test:*)`)."""
    from .command_line import parse_command_line  # the reader, at the first line read

    line = parse_command_line(command)
    if line.problem is not None or not line.commands:
        return False
    root = Path(os.path.normpath(workspace))
    start = _inside(root, root, workdir or ".")
    if start is None:
        return False
    places = [start]  # every directory a later command may run in
    for simple in line.commands:
        if allowed is not None and not simple.substituted and allowed(simple):
            continue
        moved = _check(simple, root, places)
        if moved is None:
            return False
        places.extend(p for p in moved if p not in places)
    return True


def _check(simple: SimpleCommand, root: Path, places: list[Path]) -> list[Path] | None:
    """The directories `simple` moves to (a `cd`) when it is read-only, else None."""
    if simple.assignments or not simple.words:
        return None
    if any(r.writes_file for r in simple.redirects):
        return None
    name, *args = simple.words
    entry = READ_ONLY_COMMANDS.get(name.value or "")
    if entry is None or name.value is None:
        return None
    if name.value == "git":
        return [] if _git(args, root, places) else None
    operands = _arguments(entry, args)
    if operands is None:
        return None
    if entry.paths and not all(_everywhere(root, places, o) for o in operands):
        return None
    if name.value == "cd":  # alone it goes home, `cd -` back: neither is known here
        if len(operands) != 1 or operands[0] == "-":
            return None
        targets = [_inside(root, here, operands[0]) for here in places]
        return None if None in targets else [t for t in targets if t is not None]
    return []


def _git(args: list[Word], root: Path, places: list[Path]) -> bool:
    """`git [--no-pager] [-C DIR] SUBCOMMAND ...` with a read-only subcommand."""
    i = 0
    while i < len(args):
        word = args[i].value
        if word in ("--no-pager", "--no-optional-locks"):
            i += 1
        elif word == "-C" and i + 1 < len(args):
            target = args[i + 1].value
            moved = [_inside(root, here, target) if target else None for here in places]
            if None in moved:
                return False
            places = [p for p in moved if p is not None]
            i += 2
        else:
            break
    if i >= len(args) or args[i].value not in _GIT:
        return False  # `-c key=value` can name programs; other global options are not needed
    entry, rest = _GIT[args[i].value or ""], args[i + 1 :]
    if entry.subcommands is not None:  # `git stash` alone stashes: a listing form is needed
        if not rest or rest[0].value not in entry.subcommands:
            return False
        entry, rest = entry.subcommands[rest[0].value or ""], rest[1:]
    operands = _arguments(entry, rest)
    if operands is None:
        return False
    return not entry.paths or all(_everywhere(root, places, o) for o in operands)


def _arguments(entry: ReadOnly, args: list[Word]) -> list[str] | None:
    """The operands of `args` when no flag or operand breaks `entry`, else None. A plain glob
    (`*.py`) is an operand of a command with nothing to refuse; any other unknown word, or a
    glob where a file name could become a flag, is not allowed."""
    operands: list[str] = []
    flags: set[str] = set()
    ended = False
    for word in args:
        text = word.value
        if text is None:
            pattern = _glob(word)
            if pattern is None or entry.strict:
                return None
            operands.append(pattern)
            continue
        if ended or not text.startswith("-") or text == "-":
            operands.append(text)
            continue
        if text == "--":
            ended = True
            continue
        if _refused(entry.flags, text):
            return None
        flags.add(text.partition("=")[0])
    if entry.needs and not entry.needs & flags:
        return None
    if operands and entry.operands_need and not entry.operands_need & flags:
        return None
    if entry.max_args is not None and len(operands) > entry.max_args:
        return None
    if entry.operands is not None and not all(map(entry.operands, operands)):
        return None
    return operands


def _glob(word: Word) -> str | None:
    """The pattern of an unquoted pathname glob (`*.py`, `src/*/x`), else None."""
    text = word.text
    if any(c in text for c in "$`'\"{}") or not any(c in text for c in "*?["):
        return None
    return text


def _refused(refused: frozenset[str], text: str) -> bool:
    if not refused:
        return False
    if text in refused:
        return True
    if text.startswith("--"):
        name = text.partition("=")[0]
        return len(name) > 3 and any(f.startswith(name) for f in refused if f.startswith("--"))
    if any(f.startswith("-") and not f.startswith("--") and len(f) > 2 for f in refused):
        return text.partition("=")[0] in refused  # find's -word primaries: exact words
    shorts = {f[1] for f in refused if len(f) == 2}
    return any(c in shorts for c in text[1:])


def _everywhere(root: Path, places: list[Path], operand: str) -> bool:
    return all(_inside(root, here, operand) is not None for here in places)


def _inside(root: Path, here: Path, operand: str) -> Path | None:
    """`operand` as a path from `here`, when it stays in `root` (None otherwise). `~` never
    does; a path that exists is resolved through its symlinks."""
    if operand.startswith("~"):
        return None
    if operand == "/dev/null":
        return here
    joined = Path(os.path.normpath(here / operand))
    try:
        real = joined.resolve() if joined.exists() else joined
        real_root = root.resolve()
    except (OSError, RuntimeError):
        return None
    for candidate, base in ((joined, root), (real, real_root)):
        if candidate != base and base not in candidate.parents:
            return None
    return joined

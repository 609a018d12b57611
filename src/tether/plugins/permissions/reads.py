"""Which files a bash line reads by name, so that a `Read(...)` deny holds against `cat` too.

Owns `line_reads(programs, ...)`: from the programs a line runs (`tether.plugins.permissions
.commands`, wrappers and `sh -c` bodies seen through) it lists every path the line names — each
word of each program (its name too: running a file reads it), the value after `=` of `--opt=x`
and `if=x`, the target of each input redirection (`< f`, `<> f`) — as absolute paths from every
directory the line may be in (its `workdir`, then each `cd`/`pushd` target). An unquoted glob is
expanded as bash would, against the files there now, and kept as written too (bash passes a
glob that matches nothing as it is). This over-approximates on purpose: `echo secrets/key`
names the path without reading it, and is treated as if it did.

It also lists what the line may read without naming it: the directories a recursive reader
walks (`grep -r`, `rg`, `ag`, `tar`, `cp -r`, `rsync`, `zip -r`; their directory operands, or
where they run), and why a line cannot be read with certainty (`unsure`): a program or a `cd`
known only at run time, an argument only known at run time (`cat $F`, `cat $(ls)`) of a program
that is not one of the few that only print text, a line the reader could not finish. Nothing
here decides anything: the policy denies a named path a rule denies and asks about the rest.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from .commands import Program, Programs

if TYPE_CHECKING:
    from .command_line import SimpleCommand, Word

__all__ = ["LineReads", "line_reads"]

_TEXT_ONLY: Final = frozenset(
    {"echo", "printf", "true", "false", ":", "test", "[", "[[", "seq", "basename", "dirname"}
)
"""Programs whose arguments are text, never read as files (an unknown value there is fine)."""

_ALWAYS_RECURSIVE: Final = frozenset({"rg", "ag", "ack", "tar", "rsync", "bsdtar"})
_RECURSIVE_FLAGS: Final[dict[str, tuple[frozenset[str], frozenset[str]]]] = {
    # program: (short letters, long options) that make it read directories recursively
    "grep": (frozenset("rRd"), frozenset({"--recursive", "--dereference-recursive"})),
    "egrep": (frozenset("rRd"), frozenset({"--recursive", "--dereference-recursive"})),
    "fgrep": (frozenset("rRd"), frozenset({"--recursive", "--dereference-recursive"})),
    "cp": (frozenset("rRa"), frozenset({"--recursive", "--archive"})),
    "scp": (frozenset("r"), frozenset()),
    "zip": (frozenset("r"), frozenset({"--recurse-paths"})),
}
_SEARCHERS: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
_CHANGES_DIRECTORY: Final = frozenset({"cd", "pushd"})
_MAX_PLACES: Final = 32


@dataclass(frozen=True, slots=True)
class LineReads:
    """What a line may read: `paths` it names (absolute, normalized; each also with symlinks
    resolved), `trees` it reads recursively (absolute directories), and why it may read
    something not listed (`unsure`, None when nothing)."""

    paths: tuple[str, ...]
    trees: tuple[str, ...]
    unsure: str | None


def line_reads(programs: Programs, *, workspace: Path, workdir: str | None) -> LineReads:
    """What the line whose programs are `programs` may read, run in `workdir` (relative to
    `workspace`; None: the workspace). See the module note."""
    root = os.path.normpath(workspace)
    places = [os.path.normpath(os.path.join(root, os.path.expanduser(workdir or ".")))]
    paths: dict[str, None] = {}
    trees: dict[str, None] = {}
    unsure = programs.problem

    def name(word: str) -> None:
        for here in places:
            for path in _forms(word, here):
                paths[path] = None

    seen: set[int] = set()

    def redirects(command: SimpleCommand) -> None:
        nonlocal unsure
        if id(command) in seen:
            return
        seen.add(id(command))
        for redirect in command.redirects:
            if not redirect.reads_file:
                continue
            if redirect.target.value is None:
                unsure = unsure or f'the file "{redirect.target.text}" is only known at run time'
            else:
                name(redirect.target.value)

    for program in programs.programs:
        redirects(program.command)
        if program.name is None:
            unsure = unsure or f'the program "{program.argv[0].text}" is only known at run time'
            continue
        operands: list[str] = []
        for word in program.argv:
            values = _values(word, places)
            if values is None:
                if program.name not in _TEXT_ONLY:
                    unsure = unsure or (
                        f'the argument "{word.text}" of "{program.name}" is only known at run time'
                    )
                continue
            for value in values:
                name(value)
                _, eq, after = value.partition("=")
                if eq and after:
                    name(after)
            if word is not program.argv[0] and not word.text.startswith("-"):
                operands.extend(values)
        if program.name in _CHANGES_DIRECTORY:
            target = operands[0] if len(operands) == 1 else None
            if target is None or target == "-" or len(places) > _MAX_PLACES:
                unsure = unsure or f'"{program.words}" goes to a directory not known here'
            else:
                places = list(dict.fromkeys([*places, *(_join(h, target) for h in places)]))
        if _recursive(program):
            if program.name in _SEARCHERS and len(operands) <= 1:
                operands.append(".")  # `rg x`: the pattern alone searches where it runs
            for here in places:
                for operand in operands or ["."]:
                    trees[_join(here, operand)] = None
    for command in programs.line.commands:
        redirects(command)  # those that run no program: `< file`
    return LineReads(tuple(paths), tuple(trees), unsure)


def _values(word: Word, places: list[str]) -> list[str] | None:
    """The value of `word`; for an unquoted glob, its text and what it expands to in each place;
    None when only known at run time."""
    if word.value is not None:
        return [word.value]
    text = word.text
    if any(c in text for c in "$`'\"{}\\") or not any(c in text for c in "*?["):
        return None
    import glob  # an unquoted glob in a checked command is rare: not imported at boot

    found = [text]
    for here in places:
        pattern = os.path.expanduser(text)
        base = None if os.path.isabs(pattern) else here
        try:
            found.extend(os.path.join(here, m) for m in glob.glob(pattern, root_dir=base))
        except OSError:
            return None
    return found


def _forms(value: str, here: str) -> tuple[str, ...]:
    joined = _join(here, value)
    try:
        real = os.path.realpath(joined)
    except (OSError, ValueError):
        return (joined,)
    return (joined,) if real == joined else (joined, real)


def _join(here: str, value: str) -> str:
    return os.path.normpath(os.path.join(here, os.path.expanduser(value)))


def _recursive(program: Program) -> bool:
    name = program.name
    if name in _ALWAYS_RECURSIVE:
        return True
    flags = _RECURSIVE_FLAGS.get(name or "")
    if flags is None:
        return False
    short, long = flags
    for word in program.argv[1:]:
        value = word.value or ""
        if value == "--":
            return False
        if value.startswith("--"):
            if value.partition("=")[0] in long or value.startswith("--directories=recurse"):
                return True
        elif value.startswith("-") and any(c in short for c in value[1:]):
            return True  # grep's `-d ACTION` is taken as `-d recurse`, to be safe
    return False

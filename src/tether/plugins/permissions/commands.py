"""What a bash command line runs: every program, by name, wrappers and `sh -c` bodies seen through.

Owns `programs_of(line)`: the line is read with `tether.plugins.permissions.command_line`, and
each simple command becomes the programs it starts. The program's name is its word's value with
the directory dropped (`/bin/rm`, `./rm`, `"r"m` and `\\rm` are all `rm`). Wrappers that run
another program are read with their own option grammar and the program they run is listed too,
after them: `command`, `builtin`, `exec`, `env` (`NAME=value` and `-S` strings included),
`nice`, `nohup`, `timeout`, `xargs`, `sudo`, `doas`, `su`/`runuser -c`, `stdbuf`, `ionice`,
`setsid`, `taskset`, `chroot`, `flock`, `busybox`, `watch`, `/usr/bin/time` and `find -exec`.
The body of `sh -c`, `bash -c` (and `dash`, `zsh`, `ksh`, …) and the arguments of `eval` are
read as command lines themselves, recursively.

A program whose name, or a wrapper whose options, are only known when the line runs (`$CMD x`,
`sudo $FLAGS rm`, `eval "$x"`) is listed with the reason it could not be read
(`Program.problem`), as is a line the reader could not finish (`Programs.problem`). Nothing here
decides anything: `tether.plugins.permissions.policy` treats an unreadable part as matching every
deny and ask rule and as allowed by none.

This is reading shell syntax, not running it: a script (`bash deploy.sh`), an alias, a function,
`make` or `npm run` can still run anything. Command rules are a convenience; the sandbox is the
boundary.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .command_line import CommandLine, SimpleCommand, Word

__all__ = ["Program", "Programs", "programs_of"]

_MAX_DEPTH: Final = 16


@dataclass(frozen=True, slots=True)
class Program:
    """One program a line runs: `name` (None when only known at run time), its `argv` (the
    program's word first), the simple command it comes from, the programs that started it
    (`via`: `("sudo", "bash -c")`), and why it could not be read completely (`problem`)."""

    name: str | None
    argv: tuple[Word, ...]
    command: SimpleCommand
    via: tuple[str, ...] = ()
    problem: str | None = None

    @property
    def words(self) -> str:
        """The program's name and its arguments as written, e.g. `rm -rf 'x y'`."""
        return " ".join([self.name or self.argv[0].text, *(w.text for w in self.argv[1:])])

    @property
    def values(self) -> str:
        """The program's name and its arguments' values (their text when not constant)."""
        args = (w.text if w.value is None else w.value for w in self.argv[1:])
        return " ".join([self.name or self.argv[0].text, *args])


@dataclass(frozen=True, slots=True)
class Programs:
    """Every program of a line, the simple commands of the line itself (`line`), and the first
    reason something could not be read (`problem`: the line's, a `-c` body's or a program's),
    or None."""

    line: CommandLine
    programs: tuple[Program, ...]
    problem: str | None


@dataclass(frozen=True, slots=True)
class _Grammar:
    """A wrapper's options: those taking a value (`u`, `--user`), operands before the program
    (timeout's duration), options after which nothing runs (`command -v`), an option whose
    value is a shell command (`su -c`), whether the rest is one shell command (`watch`)."""

    valued: frozenset[str] = frozenset()
    operands: int = 0
    no_program: frozenset[str] = frozenset()
    shell_option: str | None = None
    joined: bool = False


def _grammar(
    valued: str = "",
    *,
    long: Sequence[str] = (),
    operands: int = 0,
    no_program: str = "",
    shell_option: str | None = None,
    joined: bool = False,
) -> _Grammar:
    return _Grammar(
        frozenset(valued) | frozenset(long),
        operands,
        frozenset(no_program),
        shell_option,
        joined,
    )


_WRAPPERS: Final[dict[str, _Grammar]] = {
    "command": _grammar(no_program="vV"),
    "builtin": _grammar(),
    "exec": _grammar("a"),
    "env": _grammar("uCS", long=("--unset", "--chdir", "--split-string")),
    "nice": _grammar("n", long=("--adjustment",)),
    "nohup": _grammar(),
    "timeout": _grammar("sk", long=("--signal", "--kill-after"), operands=1),
    "xargs": _grammar(
        "adEILnPs",
        long=("--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines"),
    ),
    "sudo": _grammar(
        "gCDhprtTUuR",
        long=("--user", "--group", "--chdir", "--host", "--prompt", "--close-from"),
        no_program="elvVK",
    ),
    "doas": _grammar("uC"),
    "su": _grammar("csgGw", long=("--command", "--shell", "--group"), shell_option="c"),
    "runuser": _grammar("csgGuw", long=("--command", "--shell", "--group"), shell_option="c"),
    "stdbuf": _grammar("ioe", long=("--input", "--output", "--error")),
    "ionice": _grammar("cnpPu", long=("--class", "--classdata")),
    "setsid": _grammar(),
    "taskset": _grammar(operands=1, no_program="p"),
    "chroot": _grammar(operands=1),
    "flock": _grammar(
        "wEc", long=("--timeout", "--conflict-exit-code", "--command"), operands=1, shell_option="c"
    ),
    "busybox": _grammar(),
    "watch": _grammar("nqd", long=("--interval",), joined=True),
    "time": _grammar("fo", long=("--format", "--output")),
}
_SHELLS: Final = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish"})
_SHELL_VALUED: Final = frozenset({"o", "O", "--rcfile", "--init-file"})
_FIND_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@functools.cache
def _interpreter() -> re.Pattern[str]:
    return re.compile(r"(python|pypy|node|nodejs|perl|ruby|php|lua|tclsh)[0-9.]*")


_CODE_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "python": frozenset("cm"),
    "pypy": frozenset("cm"),
    "node": frozenset("ep") | {"--eval", "--print"},
    "nodejs": frozenset("ep") | {"--eval", "--print"},
    "perl": frozenset("eE"),
    "ruby": frozenset("e"),
    "php": frozenset("r"),
    "lua": frozenset("e"),
    "tclsh": frozenset(),
}
"""Options whose value is the program (`python -c`, `node -e`, `python -m`, `php -r`)."""
_INTERPRETER_VALUED: Final = frozenset("WXIlC") | {"--require", "--import", "--loader"}


def _name(word: Word) -> str | None:
    if word.value is None:
        return None
    return os.path.basename(word.value) or None


class _Unread(Exception):
    """A wrapper's options could not be read (an option only known at run time)."""


def _options(name: str, args: Sequence[Word], grammar: _Grammar) -> tuple[int | None, str | None]:
    """Where the wrapped program starts in `args` (None: nothing runs), or, for an option whose
    value is a shell command (`su -c '…'`, `env -S '…'`), where the words after it start and
    that value. Raises _Unread."""
    operands, i = grammar.operands, 0
    while i < len(args):
        word = args[i]
        value = word.value
        if value is None:
            raise _Unread(f'the options of "{name}" are only known when the line runs')
        if value == "--":
            i += 1
            break
        if value.startswith("--") and len(value) > 2:
            option, has_value, attached = value.partition("=")
            if option in grammar.no_program:
                return None, None
            if option in grammar.valued and not has_value:
                i += 1
                attached = _value_at(name, args, i)
            if option == "--split-string" or (option == "--command" and grammar.shell_option):
                return i + 1, attached
            i += 1
            continue
        if name == "nice" and value[1:].isdigit():  # nice -5
            i += 1
            continue
        if value.startswith("-") and len(value) > 1:
            for index, letter in enumerate(value[1:], start=2):
                if letter in grammar.no_program:
                    return None, None
                if letter in grammar.valued:
                    attached = value[index:]
                    if not attached:
                        i += 1
                        attached = _value_at(name, args, i)
                    if letter == grammar.shell_option or (name == "env" and letter == "S"):
                        return i + 1, attached
                    break
            i += 1
            continue
        if name == "env" and "=" in value:
            i += 1
            continue
        if operands > 0:
            operands -= 1
            i += 1
            continue
        break
    return (i if i < len(args) else None), None


def _value_at(name: str, args: Sequence[Word], index: int) -> str:
    if index >= len(args):
        return ""
    value = args[index].value
    if value is None:
        raise _Unread(f'the options of "{name}" are only known when the line runs')
    return value


def _shell_body(name: str, args: Sequence[Word]) -> tuple[bool, str | None]:
    """A shell's `-c` body: (whether -c is given, the body). Raises _Unread, also for a shell
    that reads its commands from standard input (`-s`, or no script operand)."""
    dash_c, dash_s, i = False, False, 0
    while i < len(args):
        value = args[i].value
        if value is None and dash_c:
            break  # the command
        if value is None:
            raise _Unread("the shell's options are only known when the line runs")
        if value in ("--", "-"):
            i += 1
            break
        if value[:1] in "-+" and len(value) > 1:
            if value in _SHELL_VALUED or (value[:1] in "-+" and value[1:] in _SHELL_VALUED):
                i += 2
                continue
            dash_c = dash_c or (not value.startswith("--") and "c" in value[1:])
            dash_s = dash_s or (value[0] == "-" and value[1] != "-" and "s" in value[1:])
            i += 1
            continue
        break
    if not dash_c:
        if dash_s or i >= len(args):
            raise _Unread(f'"{name}" reads the commands it runs from its standard input')
        return False, None
    if i >= len(args):
        return True, None
    body = args[i].value
    if body is None:
        raise _Unread("the shell's command is only known when the line runs")
    return True, body


def _reads_program_from_stdin(args: Sequence[Word], code_options: frozenset[str]) -> bool:
    """Whether an interpreter (`python`, `node`, `perl`...) runs a program it reads from its
    standard input: no script operand and no `-c`/`-e`/`-m` program, or the script `-`. An
    option only known at run time counts as yes."""
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None:
            return True
        if value == "-":
            return True
        if value == "--":
            return i + 1 >= len(args) or args[i + 1].value == "-"
        if value.startswith("--"):
            option = value.partition("=")[0]
            if option in code_options:
                return False
            i += 2 if option in _INTERPRETER_VALUED and "=" not in value else 1
            continue
        if value.startswith("-") and len(value) > 1:
            letters = value[1:]
            code = next((k for k, c in enumerate(letters) if c in code_options), None)
            valued = next((k for k, c in enumerate(letters) if c in _INTERPRETER_VALUED), None)
            if code is not None and (valued is None or code < valued):
                return False
            i += 2 if valued is not None and valued == len(letters) - 1 else 1
            continue
        return False  # the script
    return True


class _Walk:
    def __init__(self) -> None:
        self.programs: list[Program] = []
        self.problem: str | None = None

    def line(self, text: str, via: tuple[str, ...], depth: int) -> CommandLine:
        from .command_line import parse_command_line  # the reader, at the first line read

        parsed = parse_command_line(text)
        if depth > _MAX_DEPTH:
            self.problem = self.problem or "commands are nested too deeply"
            return parsed
        if parsed.problem is not None:
            self.problem = self.problem or parsed.problem
        for command in parsed.commands:
            if command.words:
                self.program(command, command.words, via, depth)
        return parsed

    def program(
        self, command: SimpleCommand, argv: Sequence[Word], via: tuple[str, ...], depth: int
    ) -> None:
        name = _name(argv[0])
        if name is None:
            problem = f'the program "{argv[0].text}" is only known when the line runs'
            self.programs.append(Program(None, tuple(argv), command, via, problem))
            return
        here = len(self.programs)
        self.programs.append(Program(name, tuple(argv), command, via))
        try:
            self.inner(name, command, argv, via, depth)
        except _Unread as exc:
            self.programs[here] = Program(name, tuple(argv), command, via, str(exc))

    def inner(
        self,
        name: str,
        command: SimpleCommand,
        argv: Sequence[Word],
        via: tuple[str, ...],
        depth: int,
    ) -> None:
        args = argv[1:]
        if name in _SHELLS:
            dash_c, body = _shell_body(name, args)
            if body is not None:
                self.line(body, (*via, f"{name} -c"), depth + 1)
            elif dash_c:
                raise _Unread(f'"{name} -c" has no command')
            return
        interpreter = _interpreter().fullmatch(name)
        if interpreter is not None:
            if _reads_program_from_stdin(args, _CODE_OPTIONS[interpreter[1]]):
                raise _Unread(f'"{name}" reads the program it runs from its standard input')
            return
        if name == "eval":
            if any(w.value is None for w in args):
                raise _Unread('what "eval" runs is only known when the line runs')
            self.line(" ".join(w.value or "" for w in args), (*via, "eval"), depth + 1)
            return
        if name == "find":
            for begin, stop in _find_exec(args):
                self.program(command, args[begin:stop], (*via, "find"), depth + 1)
            return
        grammar = _WRAPPERS.get(name)
        if grammar is None:
            return
        start, shell = _options(name, args, grammar)
        if shell is not None:
            rest = " ".join(w.text for w in args[start or len(args) :]) if name == "env" else ""
            self.line(f"{shell} {rest}".strip(), (*via, name), depth + 1)
        elif start is not None and grammar.joined:
            if any(w.value is None for w in args[start:]):
                raise _Unread(f'what "{name}" runs is only known when the line runs')
            self.line(" ".join(w.value or "" for w in args[start:]), (*via, name), depth + 1)
        elif start is not None:
            self.program(command, args[start:], (*via, name), depth + 1)
        elif name == "xargs":
            self.program(command, (Word("echo", "echo"),), (*via, name), depth + 1)


def _find_exec(args: Sequence[Word]) -> Iterator[tuple[int, int]]:
    """The (start, stop) of each `-exec … ;` / `-exec … +` program in find's arguments."""
    i = 0
    while i < len(args):
        if args[i].value in _FIND_EXEC:
            start = i + 1
            stop = start
            while stop < len(args) and args[stop].value not in (";", "+"):
                stop += 1
            if stop > start:
                yield start, stop
            i = stop
        i += 1


def programs_of(line: str) -> Programs:
    """Every program `line` runs (see the module note). Never raises."""
    walk = _Walk()
    parsed = walk.line(line, (), 0)
    problem = walk.problem or next((p.problem for p in walk.programs if p.problem), None)
    return Programs(parsed, tuple(walk.programs), problem)

"""Reading a bash command line as shell syntax: the simple commands it is made of.

Owns `parse_command_line`, a small recursive-descent reader of the bash grammar that permission
rules (and the read-only command list) need: words with their quoting removed, `NAME=value`
assignments, redirections and here-documents, the control operators `;` `&` `&&` `||` `|` `|&`
and newlines, subshells `( … )` and groups `{ …; }`, command substitutions `$( … )` and
`` ` … ` ``, process substitutions `<( … )` / `>( … )`, substitutions inside `"…"`, `${…}` and
unquoted here-documents, `if`/`while`/`until`/`for` and function definitions. Every simple
command is returned — the ones inside substitutions too — in source order.

A word keeps its source text and, when it is a constant, its value after quote removal
(`"r"m` is `rm`, `\\rm` is `rm`). A word whose value is only known when bash runs it — a
parameter or command substitution, a glob, a brace expansion, an ANSI-C string with escapes — has
no value (`None`): whoever reads the commands must treat it as unknown, never as its text.

What the reader does not understand it does not guess: `case` statements, `for ((…))`, an
unterminated quote or substitution, a here-document without its end line and stray `)` or `;;`
make the line *incomplete* (`CommandLine.problem` says why). Rules that deny must then assume the
worst and rules that allow must not allow (`tether.plugins.permissions.commands`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "INPUT_REDIRECTIONS",
    "CommandLine",
    "Redirect",
    "SimpleCommand",
    "Word",
    "parse_command_line",
]

_BLANK: Final = " \t"
_METACHARACTERS: Final = " \t\n;&|()<>"
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_SKIPPED_WORDS: Final = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time"}
)
_HEADER_WORDS: Final = frozenset({"for", "select"})
_SPECIAL_PARAMETERS: Final = frozenset("@*#?-$!0123456789")
_REDIRECTIONS: Final = (
    "&>>",
    "<<<",
    "<<-",
    "&>",
    ">>",
    ">|",
    ">&",
    "<&",
    "<>",
    "<<",
    ">",
    "<",
)
INPUT_REDIRECTIONS: Final = frozenset({"<", "<<", "<<-", "<<<"})
"""Redirections that only feed the command's input (a file, a here-document, a here-string)."""
_OPERATORS: Final = ("&&", "||", ";;&", ";;", ";&", "|&", ";", "&", "|", "\n")
_MAX_DEPTH: Final = 32


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word: `text` as written, `value` after quote removal, or None when the value is
    only known at run time (an expansion, a substitution, a glob)."""

    text: str
    value: str | None


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: `op` (`>`, `>>`, `2>`, `&>`, `<`, `<<`, `<<<`, `>&` …) and its target (the
    file, the file descriptor, or a here-document's delimiter)."""

    op: str
    target: Word

    @property
    def writes_file(self) -> bool:
        """Whether it opens a file for writing: `/dev/null`, descriptor copies (`2>&1`, `>&-`)
        and input redirections do not count; a target only known at run time does."""
        op = self.op.lstrip("0123456789")
        target = self.target.value
        if op in INPUT_REDIRECTIONS or op == "<&":
            return False
        if op == ">&" and target is not None and (target.isdigit() or target == "-"):
            return False
        return target != "/dev/null"

    @property
    def reads_file(self) -> bool:
        """Whether it opens its target as a file to read (`< f`, `0< f`, `<> f`)."""
        return self.op.lstrip("0123456789") in ("<", "<>")


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One simple command: its leading assignments, its words (the program and its arguments) and
    its redirections. `text` is the command as written, whitespace collapsed; `substituted` is
    true for a command inside a substitution (its output becomes part of another command)."""

    assignments: tuple[Word, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    text: str
    substituted: bool = False


@dataclass(frozen=True, slots=True)
class CommandLine:
    """Every simple command of a line, in source order, substitution bodies included.
    `problem` is None when the whole line was read, else what could not be."""

    commands: tuple[SimpleCommand, ...]
    problem: str | None = None

    @property
    def substitutes(self) -> bool:
        """Whether any command runs inside a substitution."""
        return any(c.substituted for c in self.commands)


class _Incomplete(Exception):
    """The reader met something it does not read; the message says what."""


@dataclass(slots=True)
class _Builder:
    assignments: list[Word] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    header: bool = False  # a `for`/`select` header: its words run nothing

    @property
    def empty(self) -> bool:
        return not (self.assignments or self.words or self.redirects or self.header)


@dataclass(slots=True)
class _HereDocument:
    delimiter: str
    strip_tabs: bool
    expands: bool


class _Reader:
    def __init__(self, source: str, *, substituted: bool, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _Incomplete("substitutions are nested too deeply")
        self.source = source
        self.pos = 0
        self.substituted = substituted
        self.depth = depth
        self.commands: list[SimpleCommand] = []
        self.pending: list[_HereDocument] = []

    # -- characters ---------------------------------------------------------------------------

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.source[index] if index < len(self.source) else ""

    def at(self, text: str) -> bool:
        return self.source.startswith(text, self.pos)

    def skip_blanks(self) -> None:
        while True:
            c = self.peek()
            if c and c in _BLANK:
                self.pos += 1
            elif self.at("\\\n"):
                self.pos += 2
            elif c == "#":
                end = self.source.find("\n", self.pos)
                self.pos = len(self.source) if end < 0 else end
            else:
                return

    # -- lists of commands ----------------------------------------------------------------------

    def read_list(self, closing: str | None) -> None:
        """Read commands up to `closing` (a `)`, left for the caller) or the end."""
        command = _Builder()
        while True:
            self.skip_blanks()
            c = self.peek()
            if not c or c == ")":
                self.finish(command)
                if c != (closing or ""):
                    raise _Incomplete('a ")" is missing' if closing else 'a ")" closes nothing')
                return
            operator = next((op for op in _OPERATORS if self.at(op)), None)
            if operator is not None and self.redirection_ahead() is None:
                self.finish(command)
                command = _Builder()
                if operator.startswith(";;") or operator == ";&":
                    raise _Incomplete(f'"{operator}" outside a case statement')
                self.pos += len(operator)
                if operator == "\n":
                    self.read_here_documents()
            elif c == "(":
                if not self.function_parentheses(command):
                    if not command.empty:
                        raise _Incomplete('a "(" in the middle of a command')
                    self.pos += 1
                    self.read_list(")")
                    self.pos += 1
            elif (redirection := self.redirection_ahead()) is not None:
                self.read_redirection(command, redirection)
            elif command.header:
                if self.read_word().value == "do":
                    command = _Builder()
            else:
                self.add_word(command, self.read_word())

    def function_parentheses(self, command: _Builder) -> bool:
        """`name () { …; }`: drop the name (defining a function runs nothing)."""
        rest = self.source[self.pos + 1 :].lstrip(_BLANK)
        if len(command.words) != 1 or command.assignments or not rest.startswith(")"):
            return False
        self.pos = len(self.source) - len(rest) + 1
        command.words.clear()
        command.texts.clear()
        return True

    def add_word(self, command: _Builder, word: Word) -> None:
        if command.empty and word.text == word.value and self.reserved_word(command, word.text):
            return
        if not command.words and _ASSIGNMENT.match(word.text):
            command.assignments.append(word)
        else:
            command.words.append(word)
        command.texts.append(word.text)
        if word.text == "[[" and len(command.words) == 1:
            self.read_test(command)

    def reserved_word(self, command: _Builder, word: str) -> bool:
        """Handle a reserved word at the start of a command; False when `word` is not one."""
        if word in _SKIPPED_WORDS:
            if word == "time":
                self.skip_option("-p")
            return True
        if word in _HEADER_WORDS:
            self.skip_blanks()
            if self.at("(("):
                raise _Incomplete(f'"{word} ((…))" loops are not read')
            command.header = True
            return True
        if word == "case":
            raise _Incomplete("case statements are not read")
        if word == "function":
            self.skip_blanks()
            self.read_word()  # the name
            self.skip_blanks()
            if self.at("()"):
                self.pos += 2
            return True
        return False

    def skip_option(self, option: str) -> None:
        self.skip_blanks()
        if self.at(option) and self.peek(len(option)) in ("", *_METACHARACTERS):
            self.pos += len(option)

    def read_test(self, command: _Builder) -> None:
        """`[[ … ]]`: operators inside are words of the test, not control operators."""
        while True:
            self.skip_blanks()
            if not self.peek():
                raise _Incomplete('a "]]" is missing')
            if self.peek() in "()<>" or self.at("&&") or self.at("||") or self.peek() == "\n":
                operator = "&&" if self.at("&&") else "||" if self.at("||") else self.peek()
                self.pos += len(operator)
                command.words.append(Word(operator, operator))
                command.texts.append(operator)
                continue
            word = self.read_word()
            command.words.append(word)
            command.texts.append(word.text)
            if word.text == "]]":
                return

    def finish(self, command: _Builder) -> None:
        if command.header or not (command.assignments or command.words or command.redirects):
            return
        self.commands.append(
            SimpleCommand(
                assignments=tuple(command.assignments),
                words=tuple(command.words),
                redirects=tuple(command.redirects),
                text=" ".join(command.texts),
                substituted=self.substituted,
            )
        )

    # -- redirections and here-documents -------------------------------------------------------

    def redirection_ahead(self) -> str | None:
        if self.peek() in "<>" and self.peek(1) == "(":
            return None  # a process substitution: a word
        return next((op for op in _REDIRECTIONS if self.at(op)), None)

    def read_redirection(self, command: _Builder, op: str) -> None:
        written = op
        if command.words and command.texts and self.fd_prefix(command):
            written = command.words.pop().text + op
            command.texts.pop()
        self.pos += len(op)
        self.skip_blanks()
        if not self.peek() or self.peek() in _METACHARACTERS:
            raise _Incomplete(f'the redirection "{written}" has no target')
        target = self.read_word()
        if op in ("<<", "<<-"):
            quoted = target.text != target.value
            delimiter = target.value if target.value is not None else _unquoted(target.text)
            self.pending.append(_HereDocument(delimiter, op == "<<-", expands=not quoted))
        command.redirects.append(Redirect(written, target))
        command.texts.append(f"{written}{target.text}")

    def fd_prefix(self, command: _Builder) -> bool:
        """Whether the last word is a file descriptor written against the operator (`2>`)."""
        last = command.words[-1]
        return last.text.isdigit() and self.source[: self.pos].endswith(last.text)

    def read_here_documents(self) -> None:
        for document in self.pending:
            lines_end = len(self.source)
            body: list[str] = []
            while True:
                if self.pos >= lines_end:
                    raise _Incomplete(f'the here-document has no "{document.delimiter}" line')
                end = self.source.find("\n", self.pos)
                end = lines_end if end < 0 else end
                line = self.source[self.pos : end]
                self.pos = min(end + 1, lines_end)
                if (line.lstrip("\t") if document.strip_tabs else line) == document.delimiter:
                    break
                body.append(line)
            if document.expands:
                inner = _Reader("\n".join(body), substituted=True, depth=self.depth + 1)
                inner.scan_quoted(None)
                self.commands.extend(inner.commands)
        self.pending.clear()

    # -- words ----------------------------------------------------------------------------------

    def read_word(self) -> Word:
        start = self.pos
        value: list[str] = []
        constant = True
        brace: int | None = None  # where an unquoted "{" opened in `value`
        while True:
            c = self.peek()
            if not c or c in _METACHARACTERS:
                if c in "<>" and self.peek(1) == "(" and self.pos == start:
                    self.pos += 2
                    self.read_substitution(")")
                    constant = False
                    continue
                break
            if c == "\\":
                if self.peek(1) == "\n":
                    self.pos += 2
                    continue
                if not self.peek(1):
                    raise _Incomplete("the line ends with a backslash")
                value.append(self.peek(1))
                self.pos += 2
            elif c == "'":
                end = self.source.find("'", self.pos + 1)
                if end < 0:
                    raise _Incomplete("a single quote is not closed")
                value.append(self.source[self.pos + 1 : end])
                self.pos = end + 1
            elif c == '"':
                self.pos += 1
                text, fixed = self.scan_quoted('"')
                value.append(text)
                constant = constant and fixed
            elif c in "$`":
                text, fixed = self.read_dollar()
                value.append(text)
                constant = constant and fixed
            else:
                if c in "*?" or (c == "[" and "]" in self.source[self.pos : self.word_end()]):
                    constant = False
                elif c == "{":
                    brace = len(value)
                elif c == "}" and brace is not None:
                    inside = "".join(value[brace + 1 :])
                    constant = constant and "," not in inside and ".." not in inside
                value.append(c)
                self.pos += 1
        text = self.source[start : self.pos]
        return Word(text, "".join(value) if constant else None)

    def word_end(self) -> int:
        end = self.pos
        while end < len(self.source) and self.source[end] not in _METACHARACTERS:
            end += 1
        return end

    def read_dollar(self) -> tuple[str, bool]:
        """At `$` or a backtick: (the text it stands for when constant, whether it is)."""
        c, nxt = self.peek(), self.peek(1)
        if c == "`":
            self.read_backticks()
            return "", False
        if nxt == "'":
            end = self.pos + 2
            while end < len(self.source) and self.source[end] != "'":
                end += 2 if self.source[end] == "\\" else 1
            if end >= len(self.source):
                raise _Incomplete("a $'…' string is not closed")
            body = self.source[self.pos + 2 : end]
            self.pos = end + 1
            return body, "\\" not in body
        if nxt == '"':
            self.pos += 2
            return self.scan_quoted('"')
        if self.at("$(("):
            self.read_arithmetic()
            return "", False
        if nxt == "(":
            self.pos += 2
            self.read_substitution(")")
            return "", False
        if nxt == "{":
            self.pos += 2
            self.read_parameter()
            return "", False
        if nxt and (nxt.isalnum() or nxt == "_"):
            self.pos += 2
            while self.peek() and (self.peek().isalnum() or self.peek() == "_"):
                self.pos += 1
            return "", False
        if nxt and nxt in _SPECIAL_PARAMETERS:
            self.pos += 2
            return "", False
        self.pos += 1
        return "$", True

    def scan_quoted(self, closing: str | None) -> tuple[str, bool]:
        """Inside `"…"` (or an unquoted here-document body, `closing` None): the value and
        whether it is constant; substitutions are read as commands."""
        value: list[str] = []
        constant = True
        while True:
            c = self.peek()
            if not c:
                if closing is None:
                    return "".join(value), constant
                raise _Incomplete("a double quote is not closed")
            if c == closing:
                self.pos += 1
                return "".join(value), constant
            if c == "\\":
                nxt = self.peek(1)
                if nxt in ('"', "\\", "$", "`"):
                    value.append(nxt)
                    self.pos += 2
                elif nxt == "\n":
                    self.pos += 2
                else:
                    value.append(c)
                    self.pos += 1
            elif c in "$`":
                text, fixed = self.read_dollar()
                value.append(text)
                constant = constant and fixed
            else:
                value.append(c)
                self.pos += 1

    def read_substitution(self, closing: str) -> None:
        inner = _Reader(self.source, substituted=True, depth=self.depth + 1)
        inner.pos = self.pos
        inner.read_list(closing)
        self.commands.extend(inner.commands)
        self.pos = inner.pos + 1

    def read_backticks(self) -> None:
        body: list[str] = []
        i = self.pos + 1
        while i < len(self.source) and self.source[i] != "`":
            if self.source[i] == "\\" and i + 1 < len(self.source):
                nxt = self.source[i + 1]
                body.append(nxt if nxt in "`\\$" else self.source[i : i + 2])
                i += 2
                continue
            body.append(self.source[i])
            i += 1
        if i >= len(self.source):
            raise _Incomplete("a backtick substitution is not closed")
        self.pos = i + 1
        inner = _Reader("".join(body), substituted=True, depth=self.depth + 1)
        inner.read_list(None)
        self.commands.extend(inner.commands)

    def read_parameter(self) -> None:
        """After `${`: up to the matching `}`; substitutions inside are read as commands."""
        while True:
            c = self.peek()
            if not c:
                raise _Incomplete("a ${…} expansion is not closed")
            if c == "}":
                self.pos += 1
                return
            if c == "\\":
                self.pos += 2
            elif c == "'":
                end = self.source.find("'", self.pos + 1)
                if end < 0:
                    raise _Incomplete("a single quote is not closed")
                self.pos = end + 1
            elif c == '"':
                self.pos += 1
                self.scan_quoted('"')
            elif c in "$`":
                self.read_dollar()
            else:
                self.pos += 1

    def read_arithmetic(self) -> None:
        """After `$((`: up to the matching `))`; a substitution inside is not read."""
        depth, i = 0, self.pos + 3
        while i < len(self.source):
            c = self.source[i]
            if c == "`" or self.source.startswith("$(", i):
                raise _Incomplete("a substitution inside $((…)) is not read")
            if c == "(":
                depth += 1
            elif c == ")" and depth > 0:
                depth -= 1
            elif c == ")":
                if self.source[i + 1 : i + 2] != ")":
                    break
                self.pos = i + 2
                return
            i += 1
        raise _Incomplete("a $((…)) expansion is not closed")


def _unquoted(text: str) -> str:
    return text.replace("'", "").replace('"', "").replace("\\", "")


def parse_command_line(source: str) -> CommandLine:
    """Every simple command of `source` (see the module note). Never raises: what cannot be read
    is `CommandLine.problem`, with the commands read before it."""
    reader = _Reader(source, substituted=False, depth=0)
    try:
        reader.read_list(None)
        if reader.pending:
            reader.read_here_documents()
    except _Incomplete as exc:
        return CommandLine(tuple(reader.commands), str(exc))
    return CommandLine(tuple(reader.commands))

"""Built-in exceptions built the way Monty can build them.

Owns `string_exception_arguments`. Monty makes a built-in exception from no argument or from one
string only: `raise ValueError(1)` stops the run with `RuntimeError: Internal error in monty:
exceptions can only be called with zero or one string argument`, where CPython raises
`ValueError: 1`. Before a program is fed to Monty, each call of a built-in exception class by its
bare name whose positional arguments are not one string literal gets them as one string, as
CPython would show them: one argument `ValueError(str(1))`, several `OSError(str((2, "gone")))`
(CPython shows several arguments as their tuple). Only insertions are made, so every line keeps
its number (a traceback points at the line the model wrote, showing the added `str(…)`). A
program CPython cannot parse, or a call with keywords or `*args`, is left as it is.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from typing import Final

__all__ = ["string_exception_arguments"]


@functools.cache
def _line_end() -> re.Pattern[bytes]:
    return re.compile(rb"\r\n|\r|\n")


_EXCEPTIONS: Final = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)


def _needs_string(call: ast.Call) -> bool:
    if not (isinstance(call.func, ast.Name) and call.func.id in _EXCEPTIONS):
        return False
    if call.keywords or not call.args or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    only = call.args[0]
    return len(call.args) > 1 or not (
        isinstance(only, ast.Constant) and isinstance(only.value, str)
    )


def string_exception_arguments(program: str) -> str:
    """`program` with its built-in exceptions' arguments made one string (see the module note)."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return program  # Monty reports its own syntax error
    source = program.encode("utf-8", "surrogatepass")
    starts = [0, *(found.end() for found in _line_end().finditer(source))]  # as the parser counts
    inserts: list[tuple[int, int, bytes]] = []  # (byte offset, order, text)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _needs_string(node)):
            continue
        first, last = node.args[0], node.args[-1]
        if last.end_lineno is None or last.end_col_offset is None:
            continue
        several = len(node.args) > 1
        begin = starts[first.lineno - 1] + first.col_offset
        end = starts[last.end_lineno - 1] + last.end_col_offset
        inserts.append((begin, 1, b"str((" if several else b"str("))
        inserts.append((end, 0, b"))" if several else b")"))
    if not inserts:
        return program
    for offset, _order, text in sorted(inserts, reverse=True):
        source = source[:offset] + text + source[offset:]
    return source.decode("utf-8", "surrogatepass")

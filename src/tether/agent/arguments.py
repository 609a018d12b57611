"""A model's tool-call arguments: the JSON text it sent, read once, and the answer when that
text is not JSON.

Owns `read_arguments` and `malformed_arguments_result`. The agent loop answers arguments that do
not parse itself, before any policy runs: nobody is asked to approve a call that cannot run, and
the model reads what to fix —

    Error: invalid arguments: arguments are not valid JSON: Expecting ',' delimiter (line 1,
    column 17); call "read" again with its arguments as one JSON object

(code `INVALID_ARGS`, like every argument the tool refuses).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..tools.errors import ToolArgsError
from ..tools.results import ToolFailure, failure_from

__all__ = ["ToolArguments", "malformed_arguments_result", "read_arguments"]


@dataclass(frozen=True, slots=True)
class ToolArguments:
    """`value` is the parsed JSON (`{}` for empty text), or the raw text when it does not parse;
    `problem` then says why, else None."""

    value: object
    problem: str | None = None


def read_arguments(raw: str) -> ToolArguments:
    """Parse a call's raw JSON arguments (see `ToolArguments`)."""
    if raw.strip() == "":
        return ToolArguments({})
    try:
        return ToolArguments(json.loads(raw))
    except json.JSONDecodeError as exc:
        return ToolArguments(raw, f"{exc.msg} (line {exc.lineno}, column {exc.colno})")
    except ValueError as exc:  # e.g. a number too long to convert
        return ToolArguments(raw, str(exc))


def malformed_arguments_result(tool_name: str, problem: str) -> ToolFailure:
    """The `INVALID_ARGS` result for arguments that are not JSON (see the module note)."""
    violation = (
        f"arguments are not valid JSON: {problem}; "
        f'call "{tool_name}" again with its arguments as one JSON object'
    )
    return failure_from(ToolArgsError([violation]))

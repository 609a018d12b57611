"""The tool runtime's coded errors (all `HarnessError`s; see `tether.core.errors` for the tree).

Owns: `ToolNotFoundError` (`UNKNOWN_TOOL`), `ToolArgsError` (`INVALID_ARGS`), `ToolOutputError`
(`INVALID_TOOL_OUTPUT`), `ToolTimeoutError` (`TOOL_TIMEOUT`). Each builds its own message from
what went wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.errors import HarnessError

__all__ = [
    "JsonSchemaError",
    "ToolArgsError",
    "ToolCallAborted",
    "ToolNotFoundError",
    "ToolOutputError",
    "ToolTimeoutError",
]


class ToolCallAborted(HarnessError):
    """What a capability tool raises when its call's signal aborted after the body started work:
    the registry records it exactly like its own `ABORTED` result (`tool call aborted`, name
    `AbortError`). `cause` keeps the capability's own error (e.g. the seam's abort)."""

    name = "AbortError"

    def __init__(self, *, cause: BaseException | None = None) -> None:
        super().__init__("tool call aborted", "ABORTED", cause=cause)


class ToolNotFoundError(HarnessError):
    """No tool of that name is visible to the caller: `unknown tool "<name>"`."""

    def __init__(self, tool_name: str) -> None:
        super().__init__(f'unknown tool "{tool_name}"', "UNKNOWN_TOOL")
        self.tool_name = tool_name


class ToolArgsError(HarnessError):
    """The model's arguments do not fit the tool's parameters."""

    def __init__(self, violations: Sequence[str]) -> None:
        super().__init__(f"invalid arguments: {'; '.join(violations)}", "INVALID_ARGS")
        self.violations = tuple(violations)


class ToolOutputError(HarnessError):
    """The tool returned a value its declared output schema rejects."""

    def __init__(self, tool_name: str, violations: Sequence[str]) -> None:
        super().__init__(
            f'tool "{tool_name}" returned invalid output: {"; ".join(violations)}',
            "INVALID_TOOL_OUTPUT",
        )
        self.tool_name = tool_name
        self.violations = tuple(violations)


class ToolTimeoutError(HarnessError):
    """The call ran out of its declared budget: `tool call timed out after <ms>ms`."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "TOOL_TIMEOUT")


class JsonSchemaError(HarnessError):
    """A JSON Schema outside the subset the registry enforces (raised at definition time)."""

    def __init__(self, violations: Sequence[str]) -> None:
        super().__init__(f"unsupported JSON schema: {'; '.join(violations)}", "UNSUPPORTED_SCHEMA")
        self.violations = tuple(violations)

"""The `run_code` tool (spec §8.3, Python flavor): texts, parameters, rendering and the body.

Owns: the description, `CodeRunFailedError` (`CODE_RUN_FAILED`), how a run's `{logs, result?}`
is shown to the model, and the body: a bridge per call, `ctx.code_runtime.run`, settlement, then
the outcome. The parameters are `tether.plugins.code_mode.args`, imported by the first call.
Does not own the sandbox or the scheduler (`sandbox.py`, `bridge.py`).

Outcome of an outer abort or timeout: the body re-raises its own signal's abort once every inner
call has settled, so the registry classifies `run_code` as `ABORTED` (and the timeout policy as
`TOOL_TIMEOUT` when its deadline fired), with the inner calls' results published first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ...core.errors import HarnessError
from ...core.json import JsonValue
from ...kernel import Context
from ...tools.definition import ToolDefinition, ToolOutput, define_tool
from ...tools.execution import ToolRunContext
from ...tools.model_ref import ModelRef
from ...tools.registry import RUN_CODE, ToolRuntime
from ...tools.results import ContentBlock, text_content
from .seam import CODE_RUN_FAILED, CodeRuntime

if TYPE_CHECKING:  # imported by the first call, not at boot (issue 36), as the bridge
    from .args import RunCodeArgs
    from .records import CodeRunError

__all__ = [
    "DESCRIPTION",
    "NO_OUTPUT",
    "CodeRunFailedError",
    "RunCodeArgs",
    "render_run_code",
    "render_value",
    "run_code_tool",
]


def __getattr__(attribute: str) -> object:
    """`RunCodeArgs`, from `args`, for code that imports it from here."""
    if attribute == "RunCodeArgs":
        from .args import RunCodeArgs

        return RunCodeArgs
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


DESCRIPTION: Final = (
    "Execute a Python program against the available tools. Takes two required arguments: "
    "`code`, the BODY of an async function (top-level `await` and `return` work), and "
    "`description`, a short summary of what the program does. Call tools as "
    "`await tools.name(args)` per the declarations in the system prompt. Use `print(...)` "
    "and/or `return <value>` for program output — curate it. Image-bearing subtool results are "
    "attached after the run."
)
NO_OUTPUT: Final = "(run_code completed with no output)"
_MAX_INDENT: Final = 10


class CodeRunFailedError(HarnessError):
    """`code run failed (<kind>): <message>`, plus the captured output when there was some."""

    def __init__(self, error: CodeRunError, logs: Sequence[str]) -> None:
        message = f"code run failed ({error.kind}): {error.message}"
        if logs:
            message += "\nCaptured output:\n" + "\n".join(logs)
        super().__init__(message, CODE_RUN_FAILED)
        self.kind = error.kind


def render_value(value: JsonValue) -> str:
    """A result as the model sees it: a string raw; other JSON indented by 2, compact from the
    depth where the indentation would exceed 10 characters; `None` is `null`."""
    if isinstance(value, str):
        return value
    return _pretty(value, 0)


def _compact(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _pretty(value: JsonValue, depth: int) -> str:
    inner = (depth + 1) * 2
    if not isinstance(value, dict | list) or not value or inner > _MAX_INDENT:
        return _compact(value)
    pad, close = " " * inner, " " * (depth * 2)
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(k, ensure_ascii=False)}: {_pretty(v, depth + 1)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + close + "}"
    items = [f"{pad}{_pretty(v, depth + 1)}" for v in value]
    return "[\n" + ",\n".join(items) + "\n" + close + "]"


def render_run_code(_args: object, value: JsonValue) -> Sequence[ContentBlock]:
    """`logs` joined by newlines, then the rendered `result` when present."""
    parts: list[str] = []
    if isinstance(value, dict):
        logs = value.get("logs")
        if isinstance(logs, list):
            parts.append("\n".join(str(line) for line in logs))
        if "result" in value:
            parts.append(render_value(value["result"]))
    text = "\n".join(part for part in parts if part)
    return text_content(text or NO_OUTPUT)


def run_code_tool(
    ctx: Context, *, max_parallel_calls: int = 10, timeout_ms: float | None = None
) -> ToolDefinition:
    """The `run_code` definition; its body finds `ctx.code_runtime` and `ctx.tools` per call."""

    async def run_code(args: RunCodeArgs, exec: ToolRunContext) -> dict[str, JsonValue]:
        from .bridge import DispatchBridge  # at the first run (issue 36)

        if not args.description.strip():
            raise HarnessError("invalid description: expected a non-empty string", "INVALID_ARGS")
        runtime: CodeRuntime | None = ctx.get("code_runtime")  # type: ignore[assignment]
        if runtime is None:
            raise HarnessError(
                "run_code requires a code runtime — mount tether.plugins.code_mode.plugin "
                "(provides ctx.code_runtime) or set the tools mode to native",
                "CODE_RUNTIME_MISSING",
            )
        tools: ToolRuntime = ctx.tools.runtime
        bridge = DispatchBridge(
            tools,
            exec,
            names=tuple(tools.names(exec.agent)),
            max_parallel=max_parallel_calls,
            events=ctx,
        )
        try:
            outcome = await runtime.run(
                program=args.code, bindings=bridge.bindings, signal=bridge.signal
            )
        finally:
            await bridge.settle()
        exec.signal.throw_if_aborted()  # the outer abort or timeout: ABORTED / TOOL_TIMEOUT
        if outcome.error is not None:
            raise CodeRunFailedError(outcome.error, outcome.logs)
        value: dict[str, JsonValue] = {"logs": list(outcome.logs)}
        if outcome.has_value:
            value["result"] = outcome.value
        return value

    return define_tool(
        name=RUN_CODE,
        description=DESCRIPTION,
        parameters=ModelRef("tether.plugins.code_mode.args:RunCodeArgs"),
        output=ToolOutput(render=render_run_code),
        execute=run_code,
        timeout_ms=timeout_ms,
    )

"""Presentation modes of the registry (spec §8.1, tool-runtime §1.1 step 9).

Contract: `native` (default) sends every schema but `run_code`; `code` sends only `run_code`
and a model-direct call (no `parent`) to any other visible tool is `UNKNOWN_TOOL` with the route
message, before any policy stage, while a nested call (with `parent`) runs; `both` sends every
schema. An unknown mode fails the mount with one line.
"""

from __future__ import annotations

import pytest

from tether import AbortController
from tether.kernel import Context, InvalidPluginConfig
from tether.tools import (
    Allow,
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionToken,
    ToolFailure,
    ToolOutput,
    ToolRuntime,
    define_tool,
)


async def mounted(mode: str | None) -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime, None if mode is None else {"mode": mode})
    for name in ("echo", "run_code"):
        ctx.tools.register(
            define_tool(
                name=name,
                description=f"The {name} tool.",
                parameters={"type": "object"},
                output=ToolOutput(),
                execute=lambda args, exec: "ok",
            ),
            reserved=name == "run_code",  # this test stands in for the Code Mode plugin
        )
    return ctx


async def schema_names(mode: str | None) -> list[str]:
    ctx = await mounted(mode)
    try:
        return [schema["name"] for schema in ctx.tools.schemas()]  # type: ignore[misc]
    finally:
        await ctx.dispose()


async def test_native_is_the_default_and_hides_run_code() -> None:
    assert await schema_names(None) == ["echo"]
    assert await schema_names("native") == ["echo"]


async def test_code_sends_only_run_code() -> None:
    assert await schema_names("code") == ["run_code"]


async def test_both_sends_every_schema() -> None:
    assert await schema_names("both") == ["echo", "run_code"]


async def test_code_mode_routes_a_model_direct_call_to_run_code_before_policy() -> None:
    ctx = await mounted("code")
    policy: list[str] = []

    async def pre(exec: ToolExecution, next: object) -> Allow:
        policy.append(exec.call_id)
        return Allow()

    ctx.on("tools/pre-execute", pre)
    try:
        direct = await ctx.tools.execute(
            ToolExecutionInput(
                call_id="c1", name="echo", arguments={}, signal=AbortController().signal
            )
        )
        nested = await ctx.tools.execute(
            ToolExecutionInput(
                call_id="c1:code:1",
                name="echo",
                arguments={},
                signal=AbortController().signal,
                parent=ToolExecutionToken(),
            )
        )
    finally:
        await ctx.dispose()

    assert isinstance(direct, ToolFailure)
    assert direct.code == "UNKNOWN_TOOL"
    assert direct.error.message == (
        'unknown tool "echo": only `run_code` is callable directly — call `echo` from inside a '
        "`run_code` program instead"
    )
    assert nested.value == "ok"
    assert policy == ["c1:code:1"]


async def test_an_unknown_mode_fails_the_mount() -> None:
    ctx = Context()
    with pytest.raises(InvalidPluginConfig, match="mode"):
        await ctx.plugin(ToolRuntime, {"mode": "sometimes"})
    await ctx.dispose()

"""Shared helpers for the tool-runtime tests: a mounted runtime, input builders, a recorder.

`ctx` is a root `Context` with `ToolRuntime` mounted (and nothing else); tests add the tools,
listeners and guards they need through it. `call(...)` builds a `ToolExecutionInput` with a fresh
caller signal unless one is given. `Recorder` counts what the pipeline did: each phase it entered
(pre, around, body, post) and every published `tools/result`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from tether import (
    AbortController,
    AbortSignal,
    ToolDefinition,
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolExecutionToken,
    ToolOutput,
)
from tether.kernel import Context
from tether.tools import ToolRuntime

ABD_JSON: dict[str, Any] = {
    "is_error": True,
    "content": [{"type": "text", "text": "Error: tool call aborted before dispatch"}],
    "error": {
        "message": "tool call aborted before dispatch",
        "info": {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"},
    },
}
"""The exact wire form of `ABORTED_BEFORE_DISPATCH` (spec §1.16)."""

ABORTED_JSON: dict[str, Any] = {
    "is_error": True,
    "content": [{"type": "text", "text": "Error: tool call aborted"}],
    "error": {"message": "tool call aborted", "info": {"name": "AbortError", "code": "ABORTED"}},
}
"""The exact wire form of `ABORTED` (spec §1.16)."""


def text(value: str) -> dict[str, str]:
    """One text content block."""
    return {"type": "text", "text": value}


def success_json(rendered: str) -> dict[str, Any]:
    """The wire form of a success whose content is one text block."""
    return {"is_error": False, "content": [text(rendered)]}


def denied_json(reason: str) -> dict[str, Any]:
    """The wire form of a denial: content `Error: <reason>`, code `DENIED`."""
    return error_json(reason, "ToolDenied", "DENIED")


def error_json(message: str, name: str | None = None, code: str | None = None) -> dict[str, Any]:
    """The wire form of a registry-made failure: content `Error: <message>`, info when given."""
    error: dict[str, Any] = {"message": message}
    if name is not None:
        error["info"] = {"name": name, "code": code}
    return {"is_error": True, "content": [text(f"Error: {message}")], "error": error}


@pytest.fixture
async def ctx() -> AsyncIterator[Context]:
    """A root context with `ToolRuntime` mounted; disposed after the test."""
    root = Context()
    await root.plugin(ToolRuntime)
    yield root
    await root.dispose()


def call(
    name: str = "echo",
    arguments: object = None,
    *,
    signal: AbortSignal | None = None,
    call_id: str = "c1",
    agent: object | None = None,
    parent: ToolExecutionToken | None = None,
    root_call_id: str | None = None,
) -> ToolExecutionInput:
    """A call of `name`; `arguments` default to `{}`, the signal to a fresh, live one."""
    return ToolExecutionInput(
        call_id=call_id,
        name=name,
        arguments={} if arguments is None else arguments,
        signal=AbortController().signal if signal is None else signal,
        agent=agent,
        parent=parent,
        root_call_id=root_call_id,
    )


def aborted_signal() -> AbortSignal:
    """A caller signal that is already aborted."""
    controller = AbortController()
    controller.abort()
    return controller.signal


async def returns_ok(args: object, exec: object) -> str:
    return "ok"


def raw_tool(
    name: str = "echo",
    execute: Callable[..., Any] = returns_ok,
    *,
    output: ToolOutput | None = None,
    parameters: dict[str, object] | None = None,
    **extra: Any,
) -> ToolDefinition:
    """A raw definition (no argument validation); output defaults to any JSON, rendered as text."""
    return ToolDefinition(
        name=name,
        description=f"the {name} tool",
        parameters={"type": "object"} if parameters is None else parameters,
        output=ToolOutput() if output is None else output,
        execute=execute,
        **extra,
    )


@dataclass
class Recorder:
    """Counts pipeline phases and keeps every published `(exec, result)`.

    `attach(ctx)` adds counting listeners for pre-execute, tools/execute and post-execute (each
    delegating with `next()`) and a `tools/result` observer. Bodies count themselves with
    `recorder.hit("body")`.
    """

    counts: dict[str, int] = field(
        default_factory=lambda: {"pre": 0, "around": 0, "body": 0, "post": 0, "result": 0}
    )
    published: list[tuple[ToolExecution, ToolExecutionResult]] = field(default_factory=list)

    def hit(self, phase: str) -> None:
        self.counts[phase] += 1

    def attach(self, ctx: Context) -> Recorder:
        async def pre(exec: ToolExecution, next: Callable[[], Any]) -> Any:
            self.hit("pre")
            return await next()

        async def around(exec: ToolExecution, next: Callable[[], Any]) -> Any:
            self.hit("around")
            return await next()

        async def post(exec: ToolExecution, result: ToolExecutionResult, next: Any) -> Any:
            self.hit("post")
            return await next()

        ctx.on("tools/pre-execute", pre)
        ctx.on("tools/execute", around)
        ctx.on("tools/post-execute", post)
        ctx.on("tools/result", self.observe)
        return self

    def observe(self, exec: ToolExecution, result: ToolExecutionResult) -> None:
        self.hit("result")
        self.published.append((exec, result))


@pytest.fixture
def recorder(ctx: Context) -> Recorder:
    """A `Recorder` attached to `ctx`."""
    return Recorder().attach(ctx)


class Gate:
    """An event a test opens by hand, plus an event that says someone is waiting on it."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.opened = asyncio.Event()

    async def wait(self) -> None:
        self.entered.set()
        await self.opened.wait()

    def open(self) -> None:
        self.opened.set()

"""A tether plugin for the server-mode tests: tools whose bodies record what their signal did.

`sleepy(seconds, drain=0.3)` records `started`, waits for its signal or the time, records
`aborted` (with the wall clock) when the signal aborted, winds down for `drain` seconds and
records `drained`. A `tools/pre-execute` listener answers `Ask` for `asky`. The record file is
`$SERVE_RECORD`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from typing import Any

from pydantic import BaseModel

from tether.kernel import Context
from tether.tools import Ask, ToolOutput, ToolRunContext, define_tool

name = "serve-tools"
inject = ("tools",)


def record(event: str, **fields: Any) -> None:
    with open(os.environ["SERVE_RECORD"], "a", encoding="utf-8") as out:
        out.write(json.dumps({"event": event, "at": time.time(), **fields}) + "\n")


class Sleep(BaseModel):
    seconds: float
    drain: float = 0.3


class Nothing(BaseModel):
    pass


async def sleepy(args: Sleep, exec: ToolRunContext) -> str:
    record("started", call_id=exec.call_id, pid=os.getpid())
    try:
        await asyncio.wait_for(exec.signal.wait(), args.seconds)
    except TimeoutError:
        return "rested"
    record("aborted", call_id=exec.call_id)
    await asyncio.sleep(args.drain)
    record("drained", call_id=exec.call_id)
    exec.signal.throw_if_aborted()
    return "unreachable"


class Shout(BaseModel):
    level: str
    text: str


async def shout(args: Shout, exec: ToolRunContext) -> str:
    logging.getLogger("tether.serve-tools").log(logging.getLevelName(args.level), args.text)
    return "shouted"


async def asky(args: Nothing, exec: ToolRunContext) -> str:
    return "asked and answered"


def apply(ctx: Context) -> None:
    ctx.tools.register(
        define_tool(
            name="sleepy",
            description="Sleep until aborted.",
            parameters=Sleep,
            output=ToolOutput(schema=str),
            execute=sleepy,
        )
    )
    ctx.tools.register(
        define_tool(
            name="shout",
            description="Log a line on a tether logger at a level (DEBUG, INFO, WARNING, ...).",
            parameters=Shout,
            output=ToolOutput(schema=str),
            execute=shout,
        )
    )
    ctx.tools.register(
        define_tool(
            name="asky",
            description="Needs approval.",
            parameters=Nothing,
            output=ToolOutput(schema=str),
            execute=asky,
        )
    )

    async def policy(exec: Any, next: Any) -> Any:
        return Ask("asky needs a yes") if exec.name == "asky" else await next()

    ctx.on("tools/pre-execute", policy)

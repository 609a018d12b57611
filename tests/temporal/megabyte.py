"""A test plugin for workers: `megabyte`, a tool that returns `size` characters of text (default
1,000,000) — a big result without a process, so a long session stays fast. Mount it with
`plugins: [{id: megabyte, name: tests.temporal.megabyte}]` (the repository root on PYTHONPATH).
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel

from tether.kernel import Context
from tether.tools.definition import ToolOutput, define_tool
from tether.tools.execution import ToolRunContext

name: Final = "megabyte"
inject: Final = ("tools",)


class Size(BaseModel):
    size: int = 1_000_000


async def megabyte(args: Size, exec: ToolRunContext) -> str:
    return "x" * args.size


def apply(ctx: Context) -> None:
    ctx.tools.register(
        define_tool(
            name="megabyte",
            description="Return `size` characters of text.",
            parameters=Size,
            output=ToolOutput(schema=str),
            execute=megabyte,
        )
    )

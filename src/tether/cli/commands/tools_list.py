"""`tether tools list`'s body, without cyclopts: `tether.cli.commands.tools` (the cyclopts
command, for `--help` and every other form) and `tether.cli.app`'s quick path (`tools list` with
at most `--config`/`--cwd`: issue 36, startup) both run `list_tools` here.

Owns what the listing prints and its exit code; not how its options are parsed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ...core.signals import AbortSignal
from ...kernel import ConfigError
from ...tools.arrivals import settle_tools
from ..boot import start

__all__ = ["list_tools", "quick_options"]


def _first_sentence(text: str, limit: int = 90) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    sentence = line.split(". ")[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def quick_options(argv: list[str]) -> dict[str, Path] | None:
    """`--config PATH` / `--cwd PATH` (each at most once, `=` or a separate value) as keyword
    arguments of `list_tools`; None for anything else (cyclopts parses it, with its errors)."""
    options: dict[str, Path] = {}
    rest = list(argv)
    while rest:
        flag = rest.pop(0)
        name, equals, value = flag.partition("=")
        if name not in ("--config", "--cwd") or name[2:] in options:
            return None
        if not equals:
            if not rest or rest[0].startswith("-"):
                return None
            value = rest.pop(0)
        if not value:
            return None
        options[name[2:]] = Path(value)
    return options


async def list_tools(*, config: Path | None = None, cwd: Path | None = None) -> int:
    """List the tools the configured plugins register, with their budgets."""
    workdir = (cwd or Path.cwd()).resolve()
    try:
        ctx = await start(cwd=workdir, config_paths=None if config is None else [config])
    except ConfigError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2
    try:
        await settle_tools(ctx, signal=AbortSignal.never())  # MCP servers start in the background
        for schema in ctx.tools.schemas():
            name = str(schema["name"])
            definition = ctx.tools.get(name)
            budget = (
                "" if definition.timeout_ms is None else f"  [timeout {definition.timeout_ms:g} ms]"
            )
            summary = _first_sentence(str(schema["description"] or ""))
            print(f"{name:<14} {summary}{budget}")
    finally:
        await ctx.dispose()
    return 0

"""`tether tools call NAME [ARGUMENTS]`'s body, without cyclopts: `tether.cli.commands.tools` (the
cyclopts command, for `--help` and every form this module does not read) and `tether.cli.app`'s
quick path (issue 36, startup) both run `call_tool` here.

Owns what a call prints and its exit code, and `quick_request`: the well-formed command lines it
reads itself. Anything else (`--help`, an unknown or repeated option, a value cyclopts would
convert differently or refuse) is left to cyclopts, so every usage error and help text stays its
own (tests/cli/test_tools_call.py checks the quick reading against cyclopts' binding).
`call_tool` runs one call through the full pipeline with the configured plugins, prints the result
and its code, and honours Ctrl-C, SIGTERM, SIGHUP and SIGQUIT by aborting the call's signal
(`tether.core.ending`: the result is still printed, the exit status is 128 + N; a second signal
exits at once). MCP servers start in the background: a call of a name not registered yet waits
for them (`tools/settle`); `call bash` does not. The shell keeps its spill files: a truncated
output names a file that must outlive the command.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ...core.ending import ProcessEnding
from ...core.signals import AbortController
from ...kernel import ConfigError
from ...tools import ToolExecutionInput, ToolFailure
from ...tools.arrivals import settle_tools
from ..boot import start

__all__ = ["SANDBOX_MODES", "CallRequest", "call_tool", "quick_request"]

SANDBOX_MODES: Final = ("read-only", "workspace-write", "danger-full-access")
"""The values of `--sandbox` (`tether.cli.sandbox_option`, cyclopts' `Literal`)."""

_NULLS: Final = ("none", "null")
"""Values cyclopts reads as None for an optional option: left to it."""


@dataclass(frozen=True, slots=True)
class CallRequest:
    """One `tools call`, as its command line asked for it."""

    name: str
    arguments: str = "{}"
    timeout_ms: float | None = None
    config: Path | None = None
    cwd: Path | None = None
    sandbox: str | None = None


def _option_value(flag: str, value: str) -> float | Path | str | None:
    """`value` converted as cyclopts converts it for `flag`; None where cyclopts decides."""
    if not value or value.lower() in _NULLS:
        return None
    if flag == "--timeout-ms":
        try:
            return float(value)
        except ValueError:
            return None
    if flag == "--sandbox":
        return value if value in SANDBOX_MODES else None
    return Path(value)


def quick_request(argv: list[str]) -> CallRequest | None:
    """The call `argv` (after `tools call`) asks for: NAME, then at most ARGUMENTS, with
    `--timeout-ms`/`--config`/`--cwd`/`--sandbox` (each at most once, `=` or a separate value)
    anywhere; None for any other command line (cyclopts parses it, with its help and errors)."""
    positional: list[str] = []
    options: dict[str, float | Path | str] = {}
    rest = list(argv)
    while rest:
        token = rest.pop(0)
        if not token.startswith("-"):
            positional.append(token)
            continue
        flag, equals, value = token.partition("=")
        if flag not in ("--timeout-ms", "--config", "--cwd", "--sandbox") or flag in options:
            return None
        if not equals:
            if not rest or rest[0].startswith("-"):
                return None
            value = rest.pop(0)
        converted = _option_value(flag, value)
        if converted is None:
            return None
        options[flag] = converted
    if not 1 <= len(positional) <= 2 or "" in positional:
        return None
    timeout_ms, config, cwd = (options.get(k) for k in ("--timeout-ms", "--config", "--cwd"))
    sandbox = options.get("--sandbox")
    return CallRequest(
        positional[0],
        positional[1] if len(positional) == 2 else "{}",
        timeout_ms=timeout_ms if isinstance(timeout_ms, float) else None,
        config=config if isinstance(config, Path) else None,
        cwd=cwd if isinstance(cwd, Path) else None,
        sandbox=sandbox if isinstance(sandbox, str) else None,
    )


async def call_tool(request: CallRequest) -> int:
    """Run one tool call through the full pipeline and print its result and code."""
    workdir = (request.cwd or Path.cwd()).resolve()
    try:
        parsed = json.loads(request.arguments)
    except ValueError as exc:
        print(
            f"tether: arguments are not JSON ({exc}); pass an object like '{{\"a\": 1}}'",
            file=sys.stderr,
        )
        return 2
    try:
        ctx = await start(
            cwd=workdir,
            config_paths=None if request.config is None else [request.config],
            keep_spill_files=True,
            sandbox=request.sandbox,
        )
    except (ConfigError, ValueError) as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2
    controller = AbortController()
    loop = asyncio.get_running_loop()
    timeout_ms = request.timeout_ms
    timer = None if timeout_ms is None else loop.call_later(timeout_ms / 1000, controller.abort)
    ending = ProcessEnding(on_end=controller.abort)  # a signal aborts the call, as Ctrl-C does
    try:
        with ending:
            if ctx.tools.get(request.name) is None:  # an MCP server's tool arrives once started
                await settle_tools(ctx, signal=controller.signal)
            result = await ctx.tools.execute(
                ToolExecutionInput(
                    call_id="cli-1",
                    name=request.name,
                    arguments=parsed,
                    signal=controller.signal,
                )
            )
    finally:
        if timer is not None:
            timer.cancel()
        await ctx.dispose()
    for block in result.content:
        if block.get("type") == "text":
            shown = str(block.get("text"))
            print(shown, end="" if shown.endswith("\n") else "\n")
        else:
            print(json.dumps(dict(block)))
    if isinstance(result, ToolFailure):
        code = result.code or "ERROR"
        print(f"tether: {code}: {result.error.message}", file=sys.stderr)
        return ending.exit_code(1)
    return 0

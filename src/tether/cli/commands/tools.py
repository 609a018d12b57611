"""`tether tools list` and `tether tools call <name> '<json>'` as cyclopts commands: their help,
their usage errors, and every command line the quick paths of `tether.cli.app` do not read.

The bodies live without cyclopts in `tether.cli.commands.tools_list` and
`tether.cli.commands.tools_call` (what a listing and a call print, and their exit codes); this
module owns only the options' names, types and help.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import cyclopts

from ..sandbox_option import SandboxOpt
from . import tools_call, tools_list

__all__ = ["app", "call", "list_tools"]

app = cyclopts.App(name="tools", help="Inspect and call the registered tools.")

ConfigOpt = Annotated[Path | None, cyclopts.Parameter(name="--config", help="A tether.yml to use.")]
CwdOpt = Annotated[Path | None, cyclopts.Parameter(name="--cwd", help="The workspace directory.")]


@app.command(name="list")
async def list_tools(*, config: ConfigOpt = None, cwd: CwdOpt = None) -> int:
    """List the tools the configured plugins register, with their budgets."""
    return await tools_list.list_tools(config=config, cwd=cwd)


@app.command(name="call")
async def call(
    name: str,
    arguments: str = "{}",
    *,
    timeout_ms: Annotated[float | None, cyclopts.Parameter(name="--timeout-ms")] = None,
    config: ConfigOpt = None,
    cwd: CwdOpt = None,
    sandbox: SandboxOpt = None,
) -> int:
    """Run one tool call through the full pipeline and print its result and code.

    Parameters
    ----------
    name
        The tool to call.
    arguments
        The arguments as a JSON object.
    timeout_ms
        Abort the call after this many milliseconds (the caller's own budget).
    sandbox
        Where commands may write: read-only, workspace-write (default) or danger-full-access.
    """
    request = tools_call.CallRequest(name, arguments, timeout_ms, config, cwd, sandbox)
    return await tools_call.call_tool(request)

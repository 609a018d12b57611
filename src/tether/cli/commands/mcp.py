"""`tether mcp list`, `login` and `serve`: MCP servers from the terminal, and tether as one.

`list` boots the configured plugins (the `mcp` plugin reads `tether.yml` servers and the
project's `.mcp.json`) and prints each server, its status and its tools. `login SERVER`
authorizes tether for an OAuth-protected HTTP server (`tether.plugins.mcp.login`). `serve`
exposes the configured tools over MCP on stdio (or Streamable HTTP on 127.0.0.1 with `--http
PORT`); see `tether.plugins.mcp.serve`. Without the `mcp` extra each says so in one line.

`serve` ends on SIGINT, SIGTERM, SIGHUP or SIGQUIT (`tether.core.ending`): every call in flight
is aborted and drained (its `ABORTED` result logged), then it exits 128 + N; a second signal exits
at once. On stdio it also ends when stdin does (exit 0).
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import cyclopts

from ...core.ending import ProcessEnding, exit_now
from ...core.signals import AbortSignal
from ...kernel import ConfigError, Context, tether_home
from ...plugins.mcp.config import McpConfig
from ...tools.arrivals import settle_tools
from ..boot import start

if TYPE_CHECKING:
    from ...plugins.mcp.serve import ToolServer

__all__ = ["app", "list_servers", "login_server", "serve"]

app = cyclopts.App(
    name="mcp", help="MCP servers: list the configured ones, or serve tether's tools."
)

ConfigOpt = Annotated[Path | None, cyclopts.Parameter(name="--config", help="A tether.yml to use.")]
CwdOpt = Annotated[Path | None, cyclopts.Parameter(name="--cwd", help="The workspace directory.")]

_NO_EXTRA = 'tether: MCP needs the optional extra: pip install "tether[mcp]"'


async def _boot(workdir: Path, config: Path | None) -> Context:
    ctx = await start(cwd=workdir, config_paths=None if config is None else [config])
    if ctx.get("mcp") is None:  # no server configured, or the plugin is not mounted
        from ...plugins.mcp.client import McpClients

        ctx.provide("mcp", McpClients(ctx, McpConfig()))
    return ctx


async def _started(config: Path | None, cwd: Path | None) -> Context | None:
    """The booted context of `list` and `login`; None once the missing extra or a bad
    configuration was said in one line."""
    if importlib.util.find_spec("mcp") is None:
        print(_NO_EXTRA, file=sys.stderr)
        return None
    try:
        return await _boot((cwd or Path.cwd()).resolve(), config)
    except ConfigError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return None


@app.command(name="list")
async def list_servers(*, config: ConfigOpt = None, cwd: CwdOpt = None) -> int:
    """List the configured MCP servers, their status and their tools."""
    ctx = await _started(config, cwd)
    if ctx is None:
        return 2
    from ...plugins.mcp.client import McpClients

    try:
        await settle_tools(ctx, signal=AbortSignal.never())  # servers start in the background
        clients = cast(McpClients, ctx.get("mcp"))
        views = clients.servers()
        if not views:
            print("no MCP servers configured (.mcp.json, or servers of plugin tether.plugins.mcp)")
        for view in views:
            detail = f"  {view.error}" if view.error else f"  {len(view.tools)} tools"
            print(f"{view.name:<16} {view.transport:<5} {view.status}{detail}")
            for tool in view.tools:
                print(f"  {tool}")
    finally:
        await ctx.dispose()
    return 0


@app.command(name="login")
async def login_server(
    server: str,
    *,
    no_browser: Annotated[bool, cyclopts.Parameter(name="--no-browser", negative=())] = False,
    config: ConfigOpt = None,
    cwd: CwdOpt = None,
) -> int:
    """Authorize tether for an OAuth-protected HTTP server (tokens under $TETHER_HOME, 0600).

    Parameters
    ----------
    server
        The server's name in .mcp.json (or the mcp plugin's servers).
    no_browser
        Print the authorization URL instead of opening a browser (headless); the callback still
        comes to 127.0.0.1 on this machine.
    """
    ctx = await _started(config, cwd)
    if ctx is None:
        return 2
    from ...plugins.mcp.client import McpClients
    from ...plugins.mcp.login import LoginFailed, login

    try:
        entry = cast(McpClients, ctx.get("mcp")).server_config(server)
        if entry is None:
            print(f'tether: no MCP server "{server}" is configured', file=sys.stderr)
            return 2
        try:
            await login(server, entry, out=sys.stderr, browser=not no_browser)
        except LoginFailed as exc:
            print(f"tether: login to {server} failed: {exc}", file=sys.stderr)
            return 1
    finally:
        await ctx.dispose()
    return 0


@app.command(name="serve")
async def serve(
    *,
    http: Annotated[int | None, cyclopts.Parameter(name="--http")] = None,
    allow: Annotated[tuple[str, ...], cyclopts.Parameter(name="--allow")] = ("*",),
    deny: Annotated[tuple[str, ...], cyclopts.Parameter(name="--deny")] = (),
    log: Annotated[Path | None, cyclopts.Parameter(name="--log")] = None,
    config: ConfigOpt = None,
    cwd: CwdOpt = None,
) -> int:
    """Serve the configured tools over MCP: stdio, or Streamable HTTP on 127.0.0.1.

    Parameters
    ----------
    http
        Serve Streamable HTTP on 127.0.0.1 at this port (path /mcp) instead of stdio; 0 picks
        a free port. The address is printed on stderr.
    allow
        Glob of tool names to expose (repeatable; default every tool).
    deny
        Glob of tool names never to expose (repeatable; wins over --allow).
    log
        Append one JSON line per call result here (default $TETHER_HOME/mcp-serve.jsonl).
    """
    if importlib.util.find_spec("mcp") is None:
        print(_NO_EXTRA, file=sys.stderr)
        return 2
    from ...plugins.mcp.serve import ToolServer, open_log, serve_http

    workdir = (cwd or Path.cwd()).resolve()
    try:
        ctx = await start(cwd=workdir, config_paths=None if config is None else [config])
    except ConfigError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2
    results = open_log(log or tether_home() / "mcp-serve.jsonl")
    server = ToolServer(ctx, allow=allow, deny=deny, log=results)
    with ProcessEnding(on_end=lambda _: server.abort_all()) as ending:
        try:
            await settle_tools(ctx, signal=ending.signal)  # every tool, MCP servers' included
            if http is not None:
                await serve_http(server, http, stop=ending.signal)
            elif not await _stdio_until(server, ending.signal):
                await server.drained()  # every call aborted (`on_end`) has its result logged
        finally:
            await ctx.dispose()
            results.close()
        reason = ending.reason
        if reason is not None and http is None:
            # The stdio transport's thread still blocks reading stdin and cannot be woken:
            # end the process now, as `tether.cli.app.run` would after returning.
            exit_now(reason.exit_code)
        return ending.exit_code(0)


async def _stdio_until(server: ToolServer, stop: AbortSignal) -> bool:
    """Serve on stdio until stdin ends (True: every call was drained) or `stop` aborts first
    (False: the calls are being aborted; the transport is left to the process's end)."""
    from ...plugins.mcp.serve import serve_stdio

    serving = asyncio.ensure_future(serve_stdio(server))
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait({serving, stopped}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if serving.done():
        serving.result()
        return True
    return False

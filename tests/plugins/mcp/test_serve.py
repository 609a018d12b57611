"""`tether mcp serve`, driven by the `mcp` SDK's own client (tether runs as a subprocess)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ._support import events, wait_for

ROOT = Path(__file__).resolve().parents[3]
RUN = "from tether.cli.app import run; run()"


def _serve_args(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    config = tmp_path / "tether.yml"
    config.write_text(
        "plugins:\n  - id: serve-tools\n    name: tests.plugins.mcp.servers.serve_tools\n"
    )
    args = [
        "-c",
        RUN,
        "mcp",
        "serve",
        "--config",
        str(config),
        "--log",
        str(tmp_path / "log.jsonl"),
    ]
    args += ["--allow", "sleepy", "--allow", "asky", "--allow", "read"]
    env = {
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
        "SERVE_RECORD": str(tmp_path / "record.jsonl"),
        "TETHER_HOME": str(tmp_path / "home"),
    }
    return args, env


def _log(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def test_the_sdk_client_lists_and_calls_tethers_tools(tmp_path: Path) -> None:
    args, env = _serve_args(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(tmp_path))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listing = await session.list_tools()
        assert sorted(tool.name for tool in listing.tools) == ["asky", "read", "sleepy"]
        sleepy = next(tool for tool in listing.tools if tool.name == "sleepy")
        assert sleepy.input_schema["required"] == ["seconds"]
        result = await session.call_tool("sleepy", {"seconds": 0.01})
        assert result.is_error is False
        assert [block.model_dump(exclude_none=True) for block in result.content] == [
            {"type": "text", "text": "rested"}
        ]


async def test_an_ask_is_a_denial_without_an_approval_channel(tmp_path: Path) -> None:
    args, env = _serve_args(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(tmp_path))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("asky", {})
        assert result.is_error is True
        text = result.content[0].model_dump()["text"]
        assert text == 'Error: tool "asky" requires approval, but no approval channel is available'


async def test_a_clients_cancel_aborts_the_bodys_signal_and_one_result_is_logged(
    tmp_path: Path,
) -> None:
    args, env = _serve_args(tmp_path)
    record = tmp_path / "record.jsonl"
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(tmp_path))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await session.call_tool("sleepy", {"seconds": 30})

            group.start_soon(call)
            await wait_for(lambda: len(events(record, "started")) == 1)
            group.cancel_scope.cancel()  # the SDK client sends notifications/cancelled
        await wait_for(lambda: len(events(record, "drained")) == 1)
        await wait_for(lambda: len(_log(tmp_path)) == 1)
        [entry] = _log(tmp_path)
        [started] = events(record, "started")
        assert entry["call_id"] == started["call_id"]
        assert entry["result"]["error"]["info"]["code"] == "ABORTED"
        assert len(events(record, "aborted")) == 1
        still = await session.call_tool("sleepy", {"seconds": 0.01})  # the server goes on
        assert still.is_error is False


async def test_stdin_eof_aborts_and_drains_calls_in_flight_and_exits_zero(tmp_path: Path) -> None:
    args, env = _serve_args(tmp_path)
    record = tmp_path / "record.jsonl"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        env={**os.environ, **env},
        cwd=str(tmp_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None
    messages = [
        types.JSONRPCRequest(
            jsonrpc="2.0",
            id=1,
            method="initialize",
            params={
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        ),
        types.JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized"),
        types.JSONRPCRequest(
            jsonrpc="2.0",
            id=2,
            method="tools/call",
            params={"name": "sleepy", "arguments": {"seconds": 30}},
        ),
    ]
    for message in messages:
        process.stdin.write(
            (message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode()
        )
    await process.stdin.drain()
    await wait_for(lambda: len(events(record, "started")) == 1)
    process.stdin.close()
    code = await asyncio.wait_for(process.wait(), 120)
    assert code == 0
    assert [e["event"] for e in events(record)] == ["started", "aborted", "drained"]
    [entry] = _log(tmp_path)
    assert entry["result"]["error"]["info"]["code"] == "ABORTED"


async def test_sigterm_aborts_and_drains_calls_in_flight_logs_them_and_exits_143(
    tmp_path: Path,
) -> None:
    args, env = _serve_args(tmp_path)
    record = tmp_path / "record.jsonl"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        env={**os.environ, **env},
        cwd=str(tmp_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None
    try:
        for message in _initialize_and_call(_sleepy(30)):
            process.stdin.write(message)
        await process.stdin.drain()
        await wait_for(lambda: len(events(record, "started")) == 1)
        process.send_signal(signal.SIGTERM)  # stdin stays open: the signal alone ends it
        code = await asyncio.wait_for(process.wait(), 120)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    assert code == 143
    assert [e["event"] for e in events(record)] == ["started", "aborted", "drained"]
    [entry] = _log(tmp_path)
    assert entry["result"]["error"]["info"]["code"] == "ABORTED"


async def test_a_second_signal_while_calls_drain_exits_at_once(tmp_path: Path) -> None:
    args, env = _serve_args(tmp_path)
    record = tmp_path / "record.jsonl"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        env={**os.environ, **env},
        cwd=str(tmp_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None
    try:
        for message in _initialize_and_call({"seconds": 300, "drain": 300}):
            process.stdin.write(message)
        await process.stdin.drain()
        await wait_for(lambda: len(events(record, "started")) == 1)
        process.send_signal(signal.SIGTERM)
        await wait_for(lambda: len(events(record, "aborted")) == 1)  # draining for 300 s
        process.send_signal(signal.SIGHUP)
        code = await asyncio.wait_for(process.wait(), 120)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    assert code == 129
    assert [e["event"] for e in events(record)] == ["started", "aborted"]


def _sleepy(seconds: float) -> dict[str, Any]:
    return {"seconds": seconds}


def _initialize_and_call(arguments: dict[str, Any]) -> list[bytes]:
    """The JSON-RPC lines of an `initialize` and one `sleepy` call with `arguments`."""
    messages = [
        types.JSONRPCRequest(
            jsonrpc="2.0",
            id=1,
            method="initialize",
            params={
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        ),
        types.JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized"),
        types.JSONRPCRequest(
            jsonrpc="2.0",
            id=2,
            method="tools/call",
            params={"name": "sleepy", "arguments": arguments},
        ),
    ]
    return [
        (message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode()
        for message in messages
    ]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
async def test_draining_a_cancelled_call_costs_the_server_almost_no_cpu(tmp_path: Path) -> None:
    args, env = _serve_args(tmp_path)
    record = tmp_path / "record.jsonl"
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(tmp_path))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await session.call_tool("sleepy", {"seconds": 30, "drain": 30})

            group.start_soon(call)
            await wait_for(lambda: len(events(record, "started")) == 1)
            group.cancel_scope.cancel()
        await wait_for(lambda: len(events(record, "aborted")) == 1)
        pid = int(events(record, "started")[0]["pid"])
        loop = asyncio.get_running_loop()
        cpu, wall = _cpu_seconds(pid), loop.time()
        await asyncio.sleep(2)
        used = (_cpu_seconds(pid) - cpu) / (loop.time() - wall)
        assert events(record, "drained") == []  # still draining while measured (30 s)
        assert used <= 0.05


async def test_serve_over_streamable_http_lists_calls_and_cancels(tmp_path: Path) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    args, env = _serve_args(tmp_path)
    record = tmp_path / "record.jsonl"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        "--http",
        "0",  # a port the kernel picks: no other process on the machine can hold it
        env={**os.environ, **env},
        cwd=str(tmp_path),
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    prefix = b"tether: serving MCP at "
    try:
        async with asyncio.timeout(120):  # tether boots every built-in first
            line = b""
            while not line.startswith(prefix):
                line = await process.stderr.readline()
                assert line, "tether mcp serve exited without saying where it listens"
        url = line.removeprefix(prefix).strip().decode()
        async with (
            httpx2.AsyncClient() as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listing = await session.list_tools()
            assert sorted(tool.name for tool in listing.tools) == ["asky", "read", "sleepy"]
            rested = await session.call_tool("sleepy", {"seconds": 0.01})
            assert rested.is_error is False
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await session.call_tool("sleepy", {"seconds": 30})

                group.start_soon(call)
                await wait_for(lambda: len(events(record, "started")) == 2)
                group.cancel_scope.cancel()
            await wait_for(lambda: len(events(record, "drained")) == 1)
        codes = [
            entry["result"].get("error", {}).get("info", {}).get("code") for entry in _log(tmp_path)
        ]
        assert codes == [None, "ABORTED"]
    finally:
        process.terminate()  # uvicorn shuts down gracefully; tether disposes; exit 128 + 15
        assert await asyncio.wait_for(process.wait(), 120) == 143

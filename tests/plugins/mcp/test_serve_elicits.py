"""`tether mcp serve` asks a served call's approval of its MCP client, by elicitation."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ._serve import serve_args

pytestmark = pytest.mark.timeout(300)


@asynccontextmanager
async def _session(
    tmp_path: Path, action: str | None, asked: list[Any], plugins: str = ""
) -> AsyncIterator[ClientSession]:
    async def answer(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action=action)  # type: ignore[arg-type]

    args, env = serve_args(tmp_path, plugins=plugins)
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(tmp_path))
    async with (
        stdio_client(params) as (read, write),
        ClientSession(
            read, write, elicitation_callback=None if action is None else answer
        ) as session,
    ):
        await session.initialize()
        yield session


def _text(result: types.CallToolResult) -> str:
    return str(result.content[0].model_dump()["text"])


async def test_an_accepted_elicitation_allows_the_call_once(tmp_path: Path) -> None:
    asked: list[Any] = []
    async with _session(tmp_path, "accept", asked) as session:
        result = await session.call_tool("asky", {})
        assert (result.is_error, _text(result)) == (False, "asked and answered")
    [params] = asked
    assert params.message == (
        'tether: allow the tool "asky" to run?\nwhy: asky needs a yes\narguments: {}'
    )
    assert params.requested_schema == {"type": "object", "properties": {}}


async def test_a_declined_elicitation_denies_the_call(tmp_path: Path) -> None:
    async with _session(tmp_path, "decline", []) as session:
        result = await session.call_tool("asky", {})
        assert result.is_error is True
        assert _text(result) == 'Error: the user rejected tool "asky"'


async def test_a_client_without_elicitation_gets_the_configured_policy_answer(
    tmp_path: Path,
) -> None:
    allow = "  - id: approval\n    name: approval\n    config: {non_interactive: allow}\n"
    async with _session(tmp_path, None, [], plugins=allow) as session:
        result = await session.call_tool("asky", {})
        assert (result.is_error, _text(result)) == (False, "asked and answered")

"""OAuth for HTTP servers against a local authorization server + protected MCP server
(`servers/oauth_box.py`, the SDK's auth helpers, on 127.0.0.1); the browser is an HTTP client
that follows the authorization URL."""

from __future__ import annotations

import io
import json
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tether import ToolFailure
from tether.kernel import Context
from tether.plugins import mcp as mcp_plugin
from tether.plugins.mcp.config import ServerConfig
from tether.plugins.mcp.login import login
from tether.plugins.mcp.oauth import token_path
from tether.tools import ToolRuntime

from ._support import LOADED_MACHINE_MS, SERVERS, call, events, settled, wait_for

pytestmark = pytest.mark.timeout(150)

OAUTH_BOX = str(SERVERS / "oauth_box.py")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("TETHER_HOME", str(home))
    return home


def _start(record: Path, *client: str) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, OAUTH_BOX, str(record), *client],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield str(record)
    finally:
        process.terminate()
        process.wait(60)


@pytest.fixture
def box(tmp_path: Path) -> Iterator[str]:
    yield from _start(tmp_path / "record.jsonl")


@pytest.fixture
def prebox(tmp_path: Path) -> Iterator[str]:
    yield from _start(tmp_path / "record.jsonl", "pre-client", "s3cret")


async def _url(record: str) -> str:
    await wait_for(lambda: events(Path(record), "start") != [])
    [start] = events(Path(record), "start")
    return f"http://127.0.0.1:{start['port']}/mcp"


def _browser(followed: list[str]) -> Any:
    """Opens the authorization URL: follows it (the authorization server grants at once)."""

    def open_url(url: str) -> None:
        followed.append(url)
        response = httpx2.get(url, follow_redirects=True, timeout=60)
        assert response.status_code == 200, response.text

    return open_url


async def _login(name: str, entry: dict[str, Any], home: Path) -> str:
    out = io.StringIO()
    followed: list[str] = []
    await login(name, ServerConfig.model_validate(entry), out=out, open_url=_browser(followed))
    assert len(followed) == 1
    return out.getvalue()


async def _context(servers: dict[str, Any]) -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(mcp_plugin, {"servers": servers})
    await settled(ctx)
    return ctx


def _entry(url: str, **extra: Any) -> dict[str, Any]:
    return {"type": "http", "url": url, "startup_timeout_ms": LOADED_MACHINE_MS, **extra}


async def test_login_registers_authorizes_with_pkce_and_stores_the_tokens_0600(
    box: str, home: Path
) -> None:
    url = await _url(box)
    said = await _login("guarded", _entry(url), home)
    record = Path(box)
    assert [e["event"] for e in events(record)] == ["start", "register", "authorize", "token"]
    [authorize] = events(record, "authorize")
    assert authorize["pkce"] is True
    assert authorize["scopes"] == ["tools"]
    assert events(record, "token")[0]["grant"] == "authorization_code"
    stored = token_path("guarded", url)
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(stored.parent.stat().st_mode) == 0o700
    access = json.loads(stored.read_text())["tokens"]["access_token"]
    assert access not in said
    assert said.startswith("Authorize tether for guarded at:\n  http://127.0.0.1:")


async def test_after_login_the_server_connects_with_the_stored_token(box: str, home: Path) -> None:
    url = await _url(box)
    await _login("guarded", _entry(url), home)
    ctx = await _context({"guarded": _entry(url)})
    try:
        result = await call(ctx, "mcp__guarded__hello", {})
        assert result.content == [{"type": "text", "text": "hello"}]
    finally:
        await ctx.dispose()
    assert [e["grant"] for e in events(Path(box), "token")] == ["authorization_code"]


async def test_an_expired_token_is_refreshed_before_it_is_sent(box: str, home: Path) -> None:
    url = await _url(box)
    await _login("guarded", _entry(url), home)
    stored = token_path("guarded", url)
    data = json.loads(stored.read_text())
    before = data["tokens"]["access_token"]
    data["expires_at"] = 0  # it expired
    stored.write_text(json.dumps(data))
    ctx = await _context({"guarded": _entry(url)})
    try:
        result = await call(ctx, "mcp__guarded__hello", {})
        assert result.content == [{"type": "text", "text": "hello"}]
    finally:
        await ctx.dispose()
    grants = [e["grant"] for e in events(Path(box), "token")]
    assert grants == ["authorization_code", "refresh_token"]
    assert json.loads(stored.read_text())["tokens"]["access_token"] != before


async def test_without_a_login_the_server_fails_naming_the_login_command(
    box: str, home: Path
) -> None:
    url = await _url(box)
    ctx = await _context({"guarded": _entry(url)})
    try:
        [view] = ctx.get("mcp").servers()  # type: ignore[union-attr]
        assert (view.status, view.error) == (
            "failed",
            'server "guarded" needs authorization: run `tether mcp login guarded`',
        )
    finally:
        await ctx.dispose()
    assert not token_path("guarded", url).exists()


async def test_a_preregistered_client_is_used_without_registering(prebox: str, home: Path) -> None:
    url = await _url(prebox)
    oauth = {
        "clientId": "pre-client",
        "clientSecret": "s3cret",
        "tokenEndpointAuthMethod": "client_secret_post",
    }
    entry = _entry(url, oauth=oauth)
    await _login("guarded", entry, home)
    record = Path(prebox)
    assert [e["event"] for e in events(record)] == ["start", "authorize", "token"]
    assert events(record, "token")[0]["client_id"] == "pre-client"
    ctx = await _context({"guarded": entry})
    try:
        result = await call(ctx, "mcp__guarded__hello", {})
        assert result.content == [{"type": "text", "text": "hello"}]
    finally:
        await ctx.dispose()


async def test_a_login_asks_for_the_scopes_a_session_was_challenged_for(
    prebox: str, home: Path
) -> None:
    url = await _url(prebox)
    oauth = {
        "clientId": "pre-client",
        "clientSecret": "s3cret",
        "tokenEndpointAuthMethod": "client_secret_post",
    }
    entry = _entry(url, oauth=oauth)
    stored = token_path("guarded", url)
    stored.parent.mkdir(parents=True)
    # As an unattended session leaves it after a `403 insufficient_scope` asking for `extra`.
    stored.write_text(json.dumps({"scope": "tools extra", "tokens": {"access_token": "old"}}))
    await _login("guarded", entry, home)
    [authorize] = events(Path(prebox), "authorize")
    assert authorize["scopes"] == ["tools", "extra"]
    kept = json.loads(stored.read_text())
    assert kept["scope"] == "tools extra"
    assert kept["tokens"]["access_token"] != "old"
    assert kept["tokens"]["scope"] == "tools extra"


async def test_a_static_authorization_header_is_sent_as_is(box: str, home: Path) -> None:
    url = await _url(box)
    await _login("guarded", _entry(url), home)
    access = json.loads(token_path("guarded", url).read_text())["tokens"]["access_token"]
    token_path("guarded", url).unlink()
    entry = _entry(url, headers={"Authorization": f"Bearer {access}"})
    ctx = await _context({"static": entry})
    try:
        result = await call(ctx, "mcp__static__hello", {})
        assert result.content == [{"type": "text", "text": "hello"}]
    finally:
        await ctx.dispose()


async def test_tether_mcp_login_headless_prints_the_url_and_takes_the_callback(
    box: str, tmp_path: Path, home: Path
) -> None:
    import asyncio
    import os

    url = await _url(box)
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"guarded": _entry(url)}}))
    root = Path(__file__).resolve().parents[3]
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from tether.cli.app import run; run()",
        "mcp",
        "login",
        "guarded",
        "--no-browser",
        cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": str(root / "src")},
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    async with asyncio.timeout(120):
        line = b""
        while not line.startswith(b"Authorize tether for guarded at:"):
            line = await process.stderr.readline()
            assert line, "tether mcp login exited before printing the URL"
        authorize = (await process.stderr.readline()).decode().strip()
        await asyncio.to_thread(_browser([]), authorize)
        rest = (await process.stderr.read()).decode()
        assert await process.wait() == 0, rest
    assert "tether is authorized for guarded." in rest
    assert token_path("guarded", url).exists()


async def test_a_token_revoked_mid_session_leaves_the_session_naming_the_login(
    box: str, home: Path
) -> None:
    url = await _url(box)
    await _login("guarded", _entry(url), home)
    ctx = await _context({"guarded": _entry(url)})
    try:
        forgotten = await call(ctx, "mcp__guarded__forget", {})
        assert forgotten.content == [{"type": "text", "text": "forgotten"}]
        result = await call(ctx, "mcp__guarded__hello", {})
        assert isinstance(result, ToolFailure)
        assert result.code == "MCP_CONNECTION_LOST"
        needs = 'server "guarded" needs authorization: run `tether mcp login guarded`'
        clients: Any = ctx.get("mcp")
        await wait_for(lambda: clients.servers()[0].error == needs)
        assert clients.servers()[0].status == "reconnecting"
    finally:
        await ctx.dispose()

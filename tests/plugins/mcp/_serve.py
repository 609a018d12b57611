"""Helpers for the `tether mcp serve` tests: its command line, and the server over HTTP."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
RUN = "from tether.cli.app import run; run()"


def serve_args(tmp_path: Path, *extra: str, plugins: str = "") -> tuple[list[str], dict[str, str]]:
    """`python -c RUN mcp serve` over the serve-tools plugin (and `plugins`, YAML list items),
    and its environment."""
    config = tmp_path / "tether.yml"
    config.write_text(
        "plugins:\n  - id: serve-tools\n    name: tests.plugins.mcp.servers.serve_tools\n" + plugins
    )
    args = ["-c", RUN, "mcp", "serve", "--config", str(config)]
    args += ["--log", str(tmp_path / "log.jsonl"), *extra]
    args += ["--allow", "sleepy", "--allow", "asky", "--allow", "read", "--allow", "shout"]
    env = {
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
        "SERVE_RECORD": str(tmp_path / "record.jsonl"),
        "TETHER_HOME": str(tmp_path / "home"),
    }
    return args, env


@asynccontextmanager
async def serving_http(tmp_path: Path, *extra: str) -> AsyncIterator[str]:
    """`tether mcp serve --http 0` in a subprocess; yields its URL; SIGTERM at the end (exit 0)."""
    args, env = serve_args(tmp_path, "--http", "0", *extra)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
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
        yield line.removeprefix(prefix).strip().decode()
    finally:
        process.terminate()
        assert (
            await asyncio.wait_for(process.wait(), 120) == 143
        )  # SIGTERM: 128 + 15 (docs/ending.md)

"""`tether mcp list`, and tether without the `mcp` SDK (a subprocess where `import mcp` fails)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ...patience import PATIENCE_S
from ._support import TOOLBOX

ROOT = Path(__file__).resolve().parents[3]


def _tether(
    tmp_path: Path, *args: str, block_mcp: bool = False
) -> subprocess.CompletedProcess[str]:
    prelude = "import sys; sys.modules['mcp'] = None; " if block_mcp else ""
    code = prelude + "from tether.cli.app import run; run()"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TETHER_HOME": str(tmp_path / "home")}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
    )


def _mcp_json(tmp_path: Path, servers: dict[str, object]) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def test_mcp_list_shows_each_server_its_status_and_its_tools(tmp_path: Path) -> None:
    box = {
        "command": sys.executable,
        "args": [TOOLBOX, str(tmp_path / "r.jsonl")],
        "startup_timeout_ms": 60_000,
    }
    _mcp_json(tmp_path, {"box": box, "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"}})
    done = _tether(tmp_path, "mcp", "list")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "box              stdio connected  9 tools"
    assert "  mcp__box__echo" in lines
    why = 'the legacy SSE transport is not supported; use "type": "http"'
    old = f"old              sse   failed  {why}"
    assert old in lines


def test_tether_boots_without_the_mcp_sdk_when_no_server_is_configured(tmp_path: Path) -> None:
    done = _tether(tmp_path, "tools", "list", block_mcp=True)
    assert done.returncode == 0, done.stderr
    assert "bash" in done.stdout


def test_a_configured_server_without_the_mcp_sdk_is_one_clear_line(tmp_path: Path) -> None:
    _mcp_json(tmp_path, {"box": {"command": "true"}})
    done = _tether(tmp_path, "tools", "list", block_mcp=True)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.endswith('install the optional extra: pip install "tether[mcp]"')

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
    assert lines[0] == "box              stdio connected  12 tools"
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


def _box(tmp_path: Path, *, banner: str = "", stderr: str = "") -> dict[str, object]:
    """The toolbox behind a shell that first prints `banner` on stdout and `stderr` on stderr."""
    script = f"{banner}{stderr}exec {sys.executable} {TOOLBOX} {tmp_path / 'r.jsonl'}"
    return {"command": "bash", "args": ["-c", script], "startup_timeout_ms": 60_000}


def test_a_server_that_hangs_at_startup_does_not_delay_a_call_of_another_tool(
    tmp_path: Path,
) -> None:
    marker = f"tether-hang-{os.getpid()}-{id(tmp_path)}"
    hung = {"command": "bash", "args": ["-c", f"exec -a {marker} sleep 600"]}
    hung["startup_timeout_ms"] = 600_000  # type: ignore[assignment]
    _mcp_json(tmp_path, {"hung": hung})

    done = _tether(tmp_path, "tools", "call", "bash", '{"command": "echo hi", "description": "x"}')

    assert (done.returncode, done.stdout) == (0, "hi\n"), done.stderr
    ps = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True, check=False)
    assert ps.stdout == ""  # the hung server was stopped with the command


def test_a_call_of_a_servers_tool_waits_for_that_server_to_start(tmp_path: Path) -> None:
    _mcp_json(tmp_path, {"box": _box(tmp_path, banner="sleep 1; ")})

    done = _tether(tmp_path, "tools", "call", "mcp__box__echo", '{"text": "hello"}')

    assert (done.returncode, done.stdout) == (0, "hello\n"), done.stderr


def test_a_banner_on_stdout_is_one_line_naming_the_server_and_the_server_still_works(
    tmp_path: Path,
) -> None:
    _mcp_json(tmp_path, {"box": _box(tmp_path, banner="echo 'Toolbox v1.0 ready'; ")})

    done = _tether(tmp_path, "tools", "call", "mcp__box__add", '{"a": 2, "b": 3}')

    assert (done.returncode, done.stdout) == (0, "5\n"), done.stderr
    assert done.stderr == (
        'mcp server "box" wrote a line on stdout that is not JSON-RPC (dropped): '
        "Toolbox v1.0 ready\n"
    )


def test_a_servers_stderr_is_printable_and_names_the_server(tmp_path: Path) -> None:
    colored = r"printf '\033[31mdeprecated\033[0m option \033]0;title\007x\n' >&2; "
    _mcp_json(tmp_path, {"box": _box(tmp_path, stderr=colored)})

    done = _tether(tmp_path, "tools", "call", "mcp__box__echo", '{"text": "hi"}')

    assert (done.returncode, done.stdout) == (0, "hi\n"), done.stderr
    assert "mcp box: deprecated option x\n" in done.stderr
    assert "\x1b" not in done.stderr

"""The command line starts in a blink (issue 12 §3).

Contract: `import tether`, `tether --help` and `tether tools list` do not import the model client
(`openai`, `httpx`, `httpx2`) or `rich.markdown`; the help lists every command and exits 0;
`run` and `chat` parse with argparse (their `--help` imports neither cyclopts nor the agent), the
other commands with cyclopts. Each case runs in a fresh interpreter that reports which of those
modules ended up in `sys.modules`. (Timings are `bench/startup.py`'s job.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.cli.app import COMMANDS

from ._support import python_in

HEAVY = ("openai", "httpx", "httpx2", "rich.markdown")

_REPORT = (
    "import json, sys\n"
    "{body}\n"
    "heavy = [m for m in {heavy!r} if m in sys.modules]\n"
    "sys.stderr.write('\\nHEAVY=' + json.dumps(heavy) + '\\n')\n"
)


def imported(body: str, tmp_path: Path) -> tuple[list[str], str]:
    """The HEAVY modules loaded after running `body` in a fresh interpreter, and its stdout."""
    done = python_in(tmp_path, _REPORT.format(body=body, heavy=HEAVY))
    assert done.returncode == 0, done.stderr
    line = done.stderr.rsplit("HEAVY=", 1)[1]
    return json.loads(line), done.stdout


def test_import_tether_loads_no_model_client_and_no_markdown(tmp_path: Path) -> None:
    heavy, _ = imported("import tether", tmp_path)

    assert heavy == []


def test_a_public_name_still_loads_on_first_use(tmp_path: Path) -> None:
    heavy, out = imported("import tether; print(tether.AbortController.__name__)", tmp_path)

    assert (heavy, out) == ([], "AbortController\n")


def test_tether_help_loads_no_model_client_and_no_markdown(tmp_path: Path) -> None:
    heavy, out = imported("from tether.cli.app import main\nassert main(['--help']) == 0", tmp_path)

    assert heavy == []
    assert [
        line.split()[0] for line in out.split("Commands:\n")[1].split("\n\n")[0].splitlines()
    ] == [name for name, _, _ in COMMANDS]


@pytest.mark.slow
def test_tools_list_loads_no_model_client(tmp_path: Path) -> None:
    heavy, out = imported(
        "from tether.cli.app import main\nassert main(['tools', 'list']) == 0", tmp_path
    )

    assert heavy == []
    assert "bash" in out


def test_run_help_comes_from_argparse_without_cyclopts(tmp_path: Path) -> None:
    body = (
        "from tether.cli.app import main\nassert main(['run', '--help']) == 0\n"
        "assert 'cyclopts' not in sys.modules and 'tether.agent.api' not in sys.modules"
    )
    _, out = imported(body, tmp_path)

    assert out.startswith("usage: tether run [options] [PROMPT]\n")
    assert "--output-format" in out


def test_a_commands_own_help_still_comes_from_cyclopts(tmp_path: Path) -> None:
    _, out = imported(
        "from tether.cli.app import main\nassert main(['tools', '--help']) == 0", tmp_path
    )

    assert out.startswith("Usage: tether tools")

"""The command line starts in a blink (issue 12 §3).

Contract: `import tether`, `tether --help` and `tether tools list` do not import the model client
(`openai`, `httpx`, `httpx2`) or `rich.markdown`; the help lists every command and exits 0;
`run` and `chat` parse with argparse (their `--help` imports neither cyclopts nor the agent),
`tools list` and `tools call` read their well-formed command lines themselves (their help and
usage errors stay cyclopts'), the other commands parse with cyclopts. Each case runs in a fresh
interpreter that reports which of those modules ended up in `sys.modules`. A default-configured
`tether run` sends its first model request without having imported cyclopts or pydantic (issue
36): an audit hook on `socket.connect` reports the imported packages at the moment it connects
to the model server. (Timings are `bench/startup.py`'s job.)
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from tether.cli.app import COMMANDS
from tether.testing.scripted_model import ScriptedModelServer, text_reply

from ._support import PATIENCE_S, Cli, python_in

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


@pytest.mark.slow
def test_tools_list_runs_without_cyclopts(tmp_path: Path) -> None:
    body = (
        "from tether.cli.app import main\nassert main(['tools', 'list', '--cwd', '.']) == 0\n"
        "assert 'cyclopts' not in sys.modules"
    )
    _, out = imported(body, tmp_path)

    assert "bash" in out


@pytest.mark.slow
def test_tools_list_runs_without_pydantic(tmp_path: Path) -> None:
    """Issue 36: the built-in tools are listed from their precomputed schemas, and every
    built-in's config is made without pydantic."""
    body = (
        "from tether.cli.app import main\nassert main(['tools', 'list']) == 0\n"
        "assert [m for m in ('pydantic', 'pydantic_core') if m in sys.modules] == []"
    )
    _, out = imported(body, tmp_path)

    assert "bash" in out


@pytest.mark.slow
def test_tools_list_mounts_the_shell_without_its_process_machinery_or_the_kernel_probe(
    tmp_path: Path,
) -> None:
    """Issue 36: the jail, the process machinery and the kernel probe load at the first command
    (only an agent's boot starts the probe early, for the command a model's answer brings)."""
    body = (
        "from tether.cli.app import main\nassert main(['tools', 'list']) == 0\n"
        "later = ('tether.plugins.sandbox.plan', 'tether.plugins.sandbox.probe',"
        " 'tether.plugins.shell._process')\n"
        "assert [m for m in later if m in sys.modules] == []"
    )
    _, out = imported(body, tmp_path)

    assert "bash" in out


@pytest.mark.slow
def test_tools_call_runs_without_cyclopts(tmp_path: Path) -> None:
    call = json.dumps({"command": "echo hi", "description": "x"})
    body = (
        "from tether.cli.app import main\n"
        f"assert main(['tools', 'call', 'bash', {call!r}, '--timeout-ms', '60000']) == 0\n"
        "assert 'cyclopts' not in sys.modules"
    )
    _, out = imported(body, tmp_path)

    assert out == "hi\n"


def test_a_bad_tools_call_option_is_still_named_by_cyclopts(tmp_path: Path) -> None:
    done = python_in(
        tmp_path,
        "import sys\nfrom tether.cli.app import main\n"
        "sys.exit(main(['tools', 'call', 'bash', '{}', '--bogus']))",
    )

    assert (done.returncode, "Unknown option: --bogus." in done.stdout + done.stderr) == (2, True)


def test_a_bad_tools_list_option_is_still_named_by_cyclopts(tmp_path: Path) -> None:
    done = python_in(
        tmp_path,
        "import sys\nfrom tether.cli.app import main\nsys.exit(main(['tools', 'list', '--bogus']))",
    )

    assert (done.returncode, "Unknown option: --bogus." in done.stdout + done.stderr) == (2, True)


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


_AT_FIRST_REQUEST = (
    "import gc, json, os, sys\n"
    "port = int(os.environ['OPENAI_BASE_URL'].rsplit(':', 1)[1].split('/')[0])\n"
    "def hook(event, args):\n"
    "    if event == 'socket.connect' and not os.path.exists('loaded.json'):\n"
    "        address = args[1]\n"
    "        if isinstance(address, tuple) and address[1:2] == (port,):\n"
    "            with open('loaded.json', 'w') as report:\n"
    "                packages = sorted({name.split('.')[0] for name in sys.modules})\n"
    "                ours = sorted(name for name in sys.modules if name.startswith('tether.'))\n"
    "                young = f'young={gc.get_threshold()[0]}'\n"
    "                json.dump([*packages, *ours, young], report)\n"
    "sys.addaudithook(hook)\n"
    "sys.argv[0] = 'tether'\n"
    "from tether.cli.app import run\n"
    "run()\n"
)
"""Runs `tether` and, when it connects to the model server, writes the top-level packages it
has imported to `loaded.json` (an audit hook on `socket.connect`: public API, no patching), then
tether's own modules by their full names, and the cyclic collector's first threshold as
`young=N`."""


async def loaded_at_first_request(cli: Cli, server: ScriptedModelServer) -> list[str]:
    """The top-level packages (and tether's modules, by full name) a default-configured
    `tether run` imported before it connected to the model server to send its first request."""
    server.push(text_reply("done"))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _AT_FIRST_REQUEST,
        "run",
        "say done",
        cwd=cli.work,
        env=cli.env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(PATIENCE_S):
        out, err = await process.communicate()
    assert (process.returncode, out.decode()) == (0, "done\n"), err.decode()
    loaded: list[str] = json.loads((cli.work / "loaded.json").read_text())
    return loaded


async def test_run_sends_its_first_request_without_importing_cyclopts(
    cli: Cli, server: ScriptedModelServer
) -> None:
    loaded = await loaded_at_first_request(cli, server)

    assert "cyclopts" not in loaded


USED_LATER = (
    "tether.cli.output",  # the headless JSON report: --output-format json|stream-json only
    "tether.plugins.approval.elicitation",  # a form put to the user (an MCP elicitation)
    "tether.plugins.permissions.command_line",  # the bash reader: when a command is checked
    "tether.plugins.sandbox.cgroups",  # a sandboxed command's pids cgroup: at the first spawn
    "tether.plugins.sandbox.denials",  # reading a failed command's output: at its first failure
    "tether.plugins.sandbox.plan",  # `confine`, one command's jail: at the first spawn
    "tether.plugins.shell._bwrap",  # the process machinery: at the first spawn
    "tether.plugins.shell._collect",
    "tether.plugins.shell._descendants",
    "tether.plugins.shell._env",
    "tether.plugins.shell._namespace",
    "tether.plugins.shell._process",
    "tether.plugins.shell._reaper",
    "tether.plugins.shell._spawn",
    "tether.plugins.shell._spec",
    "tether.plugins.shell.processes",  # `run_process`: at a custom tool's first process
    "tether.plugins.web.brave_response",  # a search API's response models: at its first answer
    "tether.plugins.web.exa_response",
    "tether.plugins.web.tavily_response",
    "tether.plugins.web.vocabulary",  # the web seam's requests and results: at the first call
)
"""tether modules only a later call needs (issue 36: imported at their first use)."""


async def test_run_sends_its_first_request_before_importing_what_only_a_later_call_uses(
    cli: Cli, server: ScriptedModelServer
) -> None:
    loaded = await loaded_at_first_request(cli, server)

    assert "tether.agent.loop" in loaded
    assert [name for name in USED_LATER if name in loaded] == []


async def test_the_console_script_collects_young_objects_every_50000_allocations(
    cli: Cli, server: ScriptedModelServer
) -> None:
    loaded = await loaded_at_first_request(cli, server)

    assert "young=50000" in loaded


async def test_run_sends_its_first_request_without_importing_pydantic(
    cli: Cli, server: ScriptedModelServer
) -> None:
    loaded = await loaded_at_first_request(cli, server)

    assert [name for name in ("pydantic", "pydantic_core") if name in loaded] == []

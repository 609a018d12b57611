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
    "                frozen = f'frozen={gc.get_freeze_count() > 0}'\n"
    "                collecting = f'collecting={gc.isenabled()}'\n"
    "                json.dump([*packages, *ours, young, frozen, collecting], report)\n"
    "sys.addaudithook(hook)\n"
    "sys.argv[0] = 'tether'\n"
    "from tether.cli.app import run\n"
    "run()\n"
)
"""Runs `tether` and, when it connects to the model server, writes the top-level packages it
has imported to `loaded.json` (an audit hook on `socket.connect`: public API, no patching), then
tether's own modules by their full names, the cyclic collector's first threshold as
`young=N`, whether objects were frozen (`frozen=True|False`) and whether it runs
(`collecting=True|False`)."""


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
    "tether.agent.arguments",  # reading a tool call's arguments: at the first tool call
    "tether.agent.compaction",  # summarising into a new session: when a window is first tested
    "tether.agent.llm.prices",  # the price table: at the first price asked (JSON output) or config
    "tether.agent.scheduler",  # a step's tool calls run: at the first tool call
    "tether.agent.session.check",  # checking a session file: `sessions check`, a salvage
    "tether.agent.session.files",  # reading a session file back: at the first resume or load
    "tether.agent.session.repair",  # crash repair: at the first resume, or a write failure
    "tether.agent.session.repair_report",  # as repair
    "tether.agent.session.salvage",  # as check
    "tether.agent.session.salvage_file",  # a resume's torn-tail cut, or `sessions repair`
    "tether.agent.step_log",  # a step's tool calls to the log: at the first tool call
    "tether.agent.subagents.background",  # a `task` call's child and its errors: at the first call
    "tether.agent.subagents.child",  # as background
    "tether.agent.subagents.claude_agents",  # the agent-file reader: when an agents dir exists
    "tether.agent.subagents.errors",  # as background
    "tether.cli.output",  # the headless JSON report: --output-format json|stream-json only
    "tether.plugins.approval._audit",  # the audit trail: at the first approval question
    "tether.plugins.approval.elicitation",  # a form put to the user (an MCP elicitation)
    "tether.plugins.approval.questions",  # the question put to a person: at the first ask
    "tether.plugins.code_mode.bridge",  # a run_code program's machinery: at its first run
    "tether.plugins.code_mode.exceptions",  # as bridge
    "tether.plugins.code_mode.prelude",  # as bridge
    "tether.plugins.code_mode.records",  # as bridge
    "tether.plugins.code_mode.sandbox",  # as bridge
    "tether.plugins.code_mode.sdk",  # the typed stubs: at the first code-mode prompt
    "tether.plugins.fs.beneath",  # opening beneath a root: at the first file read or write
    "tether.plugins.fs.reads",  # reads beneath a root: at the first read
    "tether.plugins.fs.records",  # the fs seam's records: at the first file operation
    "tether.plugins.fs.render",  # what a read, write or edit shows: at its first result
    "tether.plugins.fs.text",  # version tokens, the binary sniff: at the first stat or read
    "tether.plugins.fs.window",  # the `read` line window: at the first read
    "tether.plugins.fs.writes",  # writes and edits beneath a root: at the first one
    "tether.plugins.hooks.agent_view",  # the hook bridge: mounted only when hooks are configured
    "tether.plugins.hooks.bridge",
    "tether.plugins.hooks.callbacks",
    "tether.plugins.hooks.claude_config",  # parsing hook configs: when a settings file exists
    "tether.plugins.hooks.environment",  # the settings env blocks: when a settings file exists
    "tether.plugins.hooks.journal",  # journaling a hook or an approval: at the first one
    "tether.plugins.hooks.lifecycle",
    "tether.plugins.hooks.matcher",
    "tether.plugins.hooks.merge",
    "tether.plugins.hooks.notices",
    "tether.plugins.hooks.output",
    "tether.plugins.hooks.runner",
    "tether.plugins.hooks.tool_response",
    "tether.plugins.hooks.transcript",
    "tether.plugins.jobs.model",  # the job vocabulary: at the first job (or job tool call)
    "tether.plugins.permissions.call",  # one call being decided: at the first check
    "tether.plugins.permissions.command_line",  # the bash reader: when a command is checked
    "tether.plugins.permissions.commands",  # what a bash line runs: at the first bash check
    "tether.plugins.permissions.paths",  # path specifiers: at the first rule or check
    "tether.plugins.permissions.prefix",  # suggesting lasting rules: at the first question
    "tether.plugins.permissions.readonly",  # the read-only list: at the first bash check
    "tether.plugins.permissions.reads",  # what a bash line reads: when Read rules are checked
    "tether.plugins.permissions.rules",  # the rule grammar: at the first rule or check
    "tether.plugins.permissions.saved",  # saving rules: at the first "don't ask again"
    "tether.plugins.sandbox.boundary",  # may the model write a path: at the first write
    "tether.plugins.sandbox.bwrap",  # as probe
    "tether.plugins.sandbox.cgroups",  # a sandboxed command's pids cgroup: at the first spawn
    "tether.plugins.sandbox.denials",  # reading a failed command's output: at its first failure
    "tether.plugins.sandbox.gitconfig",  # as placeholders
    "tether.plugins.sandbox.placeholders",  # the shell's start-up sweep: at `kernel/warm-up`
    "tether.plugins.sandbox.plan",  # `confine`, one command's jail: at the first spawn
    "tether.plugins.sandbox.probe",  # the kernel probe: at `kernel/warm-up` or the first spawn
    "tether.plugins.sandbox.protected",  # as placeholders
    "tether.plugins.sandbox.seccomp",  # as probe
    "tether.plugins.search.query",  # a grep's or glob's normalised request: at the first search
    "tether.plugins.search.render",  # a search's result text: at the first result shown
    "tether.plugins.shell._bwrap",  # the process machinery: at the first spawn
    "tether.plugins.shell._collect",
    "tether.plugins.shell._descendants",
    "tether.plugins.shell._env",
    "tether.plugins.shell._group",  # the orphan sweep: at `kernel/warm-up`
    "tether.plugins.shell._namespace",
    "tether.plugins.shell._process",
    "tether.plugins.shell._reaper",
    "tether.plugins.shell._spawn",
    "tether.plugins.shell._spec",
    "tether.plugins.shell._tree",  # as _group
    "tether.plugins.shell.processes",  # `run_process`: at a custom tool's first process
    "tether.plugins.shell.records",  # the shell seam's requests and results: at the first command
    "tether.plugins.spill.store",  # where a spilled result is kept: at the first spill
    "tether.plugins.web.addresses",  # the fetch provider's address policy: at the first fetch
    "tether.plugins.web.brave_response",  # a search API's response models: at its first answer
    "tether.plugins.web.client",  # the shared httpx2 setup: at the first fetch or search
    "tether.plugins.web.decoding",  # a fetched body's type and charset: at the first fetch
    "tether.plugins.web.exa_response",  # as brave_response
    "tether.plugins.web.markdown",  # HTML to Markdown: at the first fetched page shown
    "tether.plugins.web.tavily_response",  # as brave_response
    "tether.plugins.web.urls",  # URL hygiene: at the first fetch
    "tether.plugins.web.vocabulary",  # the web seam's requests and results: at the first call
    "tether.tools.code_dispatch",  # a Code Mode sub-call's log record: at the first sub-call
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


async def test_the_console_script_freezes_what_its_imports_built_and_collects_again(
    cli: Cli, server: ScriptedModelServer
) -> None:
    loaded = await loaded_at_first_request(cli, server)

    assert (loaded[-2], loaded[-1]) == ("frozen=True", "collecting=True")


async def test_run_sends_its_first_request_without_importing_pydantic(
    cli: Cli, server: ScriptedModelServer
) -> None:
    loaded = await loaded_at_first_request(cli, server)

    assert [name for name in ("pydantic", "pydantic_core") if name in loaded] == []

"""Contract of the model-facing `bash` tool (spec §3.6), through `ctx.tools.execute`.

- Results render exactly: stdout, `[stderr]` + stderr, `(no output)`, a truncation notice naming
  the spill file, then `[timed out after <ms>ms]` and `[killed by signal: <SIG>]` or
  `[exit code: <n>]`. A nonzero exit and a timeout are successes, not errors.
- A caller abort mid-command ends the call `ABORTED` and the process group is dead.
- The definition declares no `timeout_ms`: with the timeout policy loaded, bash still reports
  its own `BASH_TIMEOUT` the same way.
- Values are checked with model-facing texts; only named fields reach the shell (extra keys such
  as `env` and `stdin` are ignored); a relative `workdir` is resolved against the agent's cwd.
- Background runs need the `jobs` plugin and can be disabled.
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest

from tether.core.signals import AbortController
from tether.kernel import Context
from tether.kernel.warm_up import WARM_UP_EVENT
from tether.plugins import timeout_policy
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.plugins.shell._ledger import owner_name
from tether.tools import ToolFailure, ToolRuntime

from ._support import call, marker, sleeping, text, until


async def mounted(
    cwd: Path,
    shell_config: dict[str, object] | None = None,
    bash_config: dict[str, object] | None = None,
    *,
    policy: bool = False,
) -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    if policy:
        await ctx.plugin(timeout_policy)
    await ctx.plugin(shell_plugin, {"grace_ms": 200, "cwd": str(cwd), **(shell_config or {})})
    await ctx.plugin(bash_plugin, bash_config)
    return ctx


def code_of(result: object) -> str | None:
    assert isinstance(result, ToolFailure)
    return result.code


async def test_a_nonzero_exit_is_a_success_with_an_exit_code_marker(ctx: Context) -> None:
    result = await call(ctx, {"command": "echo failing; exit 3", "description": "Fail on purpose"})

    assert not result.is_error
    assert text(result) == "failing\n[exit code: 3]"


async def test_a_command_past_its_timeout_renders_the_timeout_and_the_signal(
    ctx: Context,
) -> None:
    result = await call(ctx, {"command": "sleep 60", "description": "Wait", "timeout_ms": 100})

    assert not result.is_error
    assert text(result) == "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"


async def test_stderr_follows_stdout_under_a_marker(ctx: Context) -> None:
    result = await call(ctx, {"command": "echo out; echo err >&2", "description": "Both"})

    assert text(result) == "out\n[stderr]\nerr\n"


async def test_a_clean_exit_without_output_says_so(ctx: Context) -> None:
    assert text(await call(ctx, {"command": "true", "description": "Nothing"})) == "(no output)"


async def test_the_value_carries_the_exit_facts(ctx: Context) -> None:
    result = await call(ctx, {"command": "printf hi", "description": "Say hi"})

    assert result.value == {  # type: ignore[union-attr]
        "kind": "foreground",
        "exit_code": 0,
        "signal": None,
        "timed_out": False,
        "aborted": False,
        "timeout_ms": 120_000,
        "stdout": {"text": "hi", "truncated": False},
        "stderr": {"text": "", "truncated": False},
        "sandbox": "workspace-write",
    }


async def test_a_caller_abort_mid_command_is_aborted_and_kills_the_group(ctx: Context) -> None:
    duration = marker()
    controller = AbortController()
    command = f"sleep {duration} & wait"
    pending = asyncio.ensure_future(
        call(ctx, {"command": command, "description": "Sleep"}, signal=controller.signal)
    )
    await until(lambda: len(sleeping(duration)) == 1)
    controller.abort()
    result = await pending

    assert code_of(result) == "ABORTED"
    assert text(result) == "Error: tool call aborted"
    assert result.error.info.name == "AbortError"  # type: ignore[union-attr]
    assert sleeping(duration) == []


async def test_output_over_the_cap_shows_its_tail_and_the_spill_file(tmp_path: Path) -> None:
    ctx = await mounted(tmp_path, {"max_output_bytes": 100})
    result = await call(ctx, {"command": "seq 1 20000", "description": "Count"})
    full = "".join(f"{n}\n" for n in range(1, 20001))
    body, notice = text(result).rsplit("\n", 1)
    spill = notice.removeprefix("[output truncated; full output: ").removesuffix("]")

    assert body == full[-100:]
    assert Path(spill).read_text() == full
    assert stat.S_IMODE(os.stat(spill).st_mode) == 0o600
    await ctx.dispose()


async def test_a_spill_dir_holds_the_full_output_until_the_shell_closes(tmp_path: Path) -> None:
    spill_dir = tmp_path / "run" / "spill"
    ctx = await mounted(tmp_path, {"max_output_bytes": 100, "spill_dir": str(spill_dir)})
    result = await call(ctx, {"command": "seq 1 20000", "description": "Count"})
    notice = text(result).rsplit("\n", 1)[1]
    spill = Path(notice.removeprefix("[output truncated; full output: ").removesuffix("]"))

    assert spill.parent.parent == spill_dir
    assert spill.parent.name.startswith(f"tether-shell-{os.getpid()}-")
    assert stat.S_IMODE(os.stat(spill_dir).st_mode) == 0o700
    assert spill.read_text() == "".join(f"{n}\n" for n in range(1, 20001))
    await ctx.dispose()
    assert list(spill_dir.iterdir()) == []


async def spill_of_a_dead_tether(spill_dir: Path) -> Path:
    """A spill directory (holding one file) owned by a process that has exited."""
    gone = await asyncio.create_subprocess_exec("true")
    await gone.wait()
    dead = spill_dir / f"tether-shell-{gone.pid}-0-abc"  # owner: <pid>-<start ticks>
    dead.mkdir(parents=True)
    (dead / "f.log").write_text("x")
    return dead


async def test_the_spill_directories_a_dead_tether_left_are_gone_by_the_first_command(
    tmp_path: Path,
) -> None:
    spill_dir = tmp_path / "spill"
    await spill_of_a_dead_tether(spill_dir)
    live = spill_dir / f"tether-shell-{owner_name()}-def"
    other = spill_dir / "notes"
    for directory in (live, other):
        directory.mkdir(parents=True)
        (directory / "f.log").write_text("x")

    ctx = await mounted(tmp_path, {"spill_dir": str(spill_dir)})
    await call(ctx, {"command": "true", "description": "Run the first command"})

    assert sorted(p.name for p in spill_dir.iterdir()) == sorted([live.name, other.name])
    await ctx.dispose()


async def test_the_spill_directories_a_dead_tether_left_are_gone_when_an_idle_shell_closes(
    tmp_path: Path,
) -> None:
    spill_dir = tmp_path / "spill"
    await spill_of_a_dead_tether(spill_dir)
    ctx = await mounted(tmp_path, {"spill_dir": str(spill_dir)})

    await ctx.dispose()

    assert list(spill_dir.iterdir()) == []


async def test_the_spill_directories_a_dead_tether_left_are_gone_after_the_warm_up(
    tmp_path: Path,
) -> None:
    spill_dir = tmp_path / "spill"
    dead = await spill_of_a_dead_tether(spill_dir)
    ctx = await mounted(tmp_path, {"spill_dir": str(spill_dir)})

    ctx.emit(WARM_UP_EVENT)
    await until(lambda: not dead.exists())

    assert list(spill_dir.iterdir()) == []
    await ctx.dispose()


async def test_the_timeout_policy_does_not_apply_to_bash(tmp_path: Path) -> None:
    ctx = await mounted(tmp_path, policy=True)
    definition = ctx.tools.get("bash")
    result = await call(ctx, {"command": "sleep 60", "description": "Wait", "timeout_ms": 100})

    assert definition is not None
    assert definition.timeout_ms is None
    assert text(result) == "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"
    await ctx.dispose()


async def test_secrets_in_the_environment_do_not_reach_the_command(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_API_KEY", "sk-do-not-leak")
    result = await call(ctx, {"command": 'echo "[${MY_API_KEY-absent}]"', "description": "Env"})

    assert text(result) == "[absent]\n"


async def test_output_that_is_not_utf8_does_not_crash(ctx: Context) -> None:
    result = await call(ctx, {"command": r"printf '\xff\xfeok'", "description": "Bytes"})

    assert text(result) == "\ufffd\ufffdok"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"command": "  ", "description": "x"}, "invalid command: expected a non-empty string"),
        (
            {"command": "true", "description": ""},
            "invalid description: expected a non-empty string",
        ),
        (
            {"command": "true", "description": "x", "timeout_ms": 0},
            "invalid timeout_ms: expected a positive number, got 0",
        ),
        (
            {"command": "true", "description": "x", "timeout_ms": -2.5},
            "invalid timeout_ms: expected a positive number, got -2.5",
        ),
    ],
)
async def test_bad_values_are_refused_with_model_facing_texts(
    ctx: Context, arguments: dict[str, object], message: str
) -> None:
    result = await call(ctx, arguments)

    assert result.is_error
    assert text(result) == f"Error: {message}"


async def test_extra_model_keys_are_never_forwarded(ctx: Context) -> None:
    result = await call(
        ctx,
        {
            "command": "echo ${EXTRA-unset}; cat",
            "description": "Extras",
            "env": {"EXTRA": "x"},
            "stdin": "data",
        },
    )

    assert text(result) == "unset\n"


async def test_a_relative_workdir_is_resolved_against_the_agent_cwd(
    ctx: Context, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    agent = SimpleNamespace(id="agent-1", cwd=str(tmp_path))

    in_sub = await call(
        ctx, {"command": "pwd", "description": "Where", "workdir": "sub"}, agent=agent
    )
    at_root = await call(ctx, {"command": "pwd", "description": "Where"}, agent=agent)

    assert text(in_sub) == f"{os.path.realpath(tmp_path / 'sub')}\n"
    assert text(at_root) == f"{os.path.realpath(tmp_path)}\n"


async def test_a_missing_workdir_is_an_error_naming_enoent(ctx: Context, tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    result = await call(ctx, {"command": "true", "description": "x", "workdir": str(missing)})

    assert code_of(result) == "SHELL_SPAWN_FAILED"
    assert text(result) == f"Error: spawn failed: ENOENT: No such file or directory: '{missing}'"


async def test_background_runs_need_the_jobs_plugin(tmp_path: Path) -> None:
    ctx = await mounted(tmp_path)
    result = await call(ctx, {"command": "sleep 1", "description": "x", "run_in_background": True})

    assert text(result) == 'Error: background jobs unavailable: load the "jobs" plugin'
    await ctx.dispose()


async def test_background_runs_can_be_disabled(tmp_path: Path) -> None:
    ctx = await mounted(tmp_path, bash_config={"enable_run_in_background": False})
    (schema,) = ctx.tools.schemas()
    result = await call(ctx, {"command": "true", "description": "x", "run_in_background": True})

    assert "run_in_background" not in schema["parameters"]["properties"]
    assert schema["description"].endswith(
        "Background execution is not available; long-running commands must finish within the "
        "timeout."
    )
    assert text(result) == (
        "Error: run_in_background is disabled for this deployment (enable_run_in_background: false)"
    )
    await ctx.dispose()


async def test_the_model_facing_schema_lists_the_parameters_in_order(ctx: Context) -> None:
    (schema,) = [s for s in ctx.tools.schemas() if s["name"] == "bash"]
    parameters = schema["parameters"]

    assert list(parameters["properties"]) == [
        "command",
        "description",
        "timeout_ms",
        "workdir",
        "run_in_background",
    ]
    assert parameters["required"] == ["command", "description"]

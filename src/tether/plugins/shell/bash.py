"""The `bash` plugin: the model-facing `bash` tool over `ctx.shell` (and `ctx.jobs` for
`run_in_background`).

Owns: the description, value checks with their model-facing texts, building the
request from named fields only (extra model keys such as `env` or `stdin` are never forwarded),
workdir resolution against the calling agent's `cwd`, foreground runs, background starts as
`bash` jobs, the value and its rendering. Does not own running or stopping anything (`ctx.shell`)
or the job lifecycle (`ctx.jobs`).

Cancellation: the body forwards `exec.signal` to `ctx.shell.run`; a run the signal cut short
raises `ToolCallAborted`, so the result is `ABORTED` (`tool call aborted`). The definition
declares no `timeout_ms`: bash enforces its own `BASH_TIMEOUT` and reports it as a normal result,
so the timeout policy never applies. A background job started by a call that was cancelled
meanwhile is killed (the model never saw its id).

Mount after `shell` and `ToolRuntime`: `await ctx.plugin(tether.plugins.shell.bash)` (entry point
`bash`); config `enable_run_in_background` (default true). The argument models live in
`tether.plugins.shell.bash_args`, imported by the first call (still importable from here).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, NotRequired, cast

from typing_extensions import TypedDict

from ...core.json import JsonValue
from ...core.timeout import format_ms
from ...kernel import Context
from ...kernel.config_models import ConfigValue
from ...tools import ModelRef, ToolDefinition, ToolOutput, ToolRunContext, define_tool
from ...tools.results import ContentBlock, text_content
from ..approval.escalation import ask_to_leave_sandbox
from ..sandbox.bounds import bound_hit, bound_note
from ..sandbox.policy import FULL_ACCESS, SandboxMode, SandboxPolicy
from .errors import SpawnAbortedError, ToolCallAborted
from .render import StreamValue, render_background_read, render_foreground, stream_value
from .seam import ShellExecutor, ShellProcess

if TYPE_CHECKING:  # imported by the first call, not at boot (issue 36)
    from ..jobs.model import JobOutcome
    from .bash_args import BashBackgroundParameters, BashParameters, ForegroundOnlyParameters
    from .records import ResolvedShellRequest, ShellRequest, ShellRunResult

__all__ = [
    "BashBackgroundParameters",
    "BashParameters",
    "Config",
    "ForegroundOnlyParameters",
    "apply",
    "bash_tool",
    "inject",
    "name",
]

_ARGUMENT_MODELS: Final = frozenset(
    {"BashParameters", "BashBackgroundParameters", "ForegroundOnlyParameters"}
)


def __getattr__(attribute: str) -> object:
    """The argument models, from `bash_args`, for code that imports them from here."""
    if attribute in _ARGUMENT_MODELS:
        from . import bash_args

        return getattr(bash_args, attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


name: Final = "bash"
inject: Final = ("tools", "shell")

_LABEL_MAX: Final = 200

_DESCRIPTION: Final = (
    "Execute a bash command (`bash -c`) and return its stdout/stderr. Each call runs in a fresh "
    "shell: no state (cwd, variables, functions) persists between calls — pass `workdir` "
    "instead of using `cd`. Non-zero exits are reported as `[exit code: N]`. Long output is "
    "truncated to its tail; the full output is saved to a file whose path is reported when "
    "available."
)
_BACKGROUND_ON: Final = (
    " Set `run_in_background: true` for long-running commands: the call returns a job id "
    "immediately; read its output with `job_output` and stop it with `job_kill`."
)
_BACKGROUND_OFF: Final = (
    " Background execution is not available; long-running commands must finish within the timeout."
)


_BACKGROUND_ARGS: Final = ModelRef("tether.plugins.shell.bash_args:BashBackgroundParameters")
_FOREGROUND_ARGS: Final = ModelRef("tether.plugins.shell.bash_args:ForegroundOnlyParameters")


class Config(ConfigValue):
    """`enable_run_in_background`: offer `run_in_background` (needs the `jobs` plugin)."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models

    enable_run_in_background: bool = True


class ForegroundValue(TypedDict):
    kind: Literal["foreground"]
    exit_code: int | None
    signal: str | None
    timed_out: bool
    aborted: bool
    timeout_ms: float
    stdout: StreamValue
    stderr: StreamValue
    sandbox: str
    """The sandbox it ran in (`workspace-write`...); `danger-full-access` after an escape the
    user approved."""
    sandbox_note: NotRequired[str]
    """Why it may have failed because of the sandbox, and what was decided."""


class BackgroundValue(TypedDict):
    kind: Literal["background"]
    job_id: str


BashValue = ForegroundValue | BackgroundValue


def _render(_args: object, value: JsonValue) -> list[ContentBlock]:
    v: Any = value
    if v["kind"] == "background":
        return list(text_content(f"started background job {v['job_id']}"))
    text = render_foreground(
        v["stdout"],
        v["stderr"],
        exit_code=v["exit_code"],
        signal_name=v["signal"],
        timed_out=v["timed_out"],
        timeout_ms=v["timeout_ms"],
        note=v.get("sandbox_note"),
    )
    return list(text_content(text))


def _presentation(args: Any, value: JsonValue) -> JsonValue:
    v: Any = value
    command = args.get("command", "") if hasattr(args, "get") else ""
    if v["kind"] == "background":
        return {"card": "generic", "title": command, "kind": "execute", "job_id": v["job_id"]}
    meta: dict[str, JsonValue] = {"card": "terminal", "title": command}
    description = args.get("description") if hasattr(args, "get") else None
    if isinstance(description, str):
        meta["description"] = description
    if v["signal"] is not None:
        meta["signal"] = v["signal"]
    else:
        meta["exit_code"] = v["exit_code"]
    return meta


def _check(args: BashParameters) -> None:
    if not args.command.strip():
        raise ValueError("invalid command: expected a non-empty string")
    if not args.description.strip():
        raise ValueError("invalid description: expected a non-empty string")
    t = args.timeout_ms
    if t is not None and not (t > 0 and t != float("inf")):
        raise ValueError(f"invalid timeout_ms: expected a positive number, got {format_ms(t)}")


def _workdir(requested: str | None, agent: object | None) -> str | None:
    """The agent's `cwd` (when it has one) is the base: absent ⇒ it, relative ⇒ joined onto it.
    Without one the executor resolves against its own cwd."""
    base = getattr(agent, "cwd", None) if agent is not None else None
    if not isinstance(base, str | os.PathLike):
        return requested
    base = os.path.realpath(base)
    return base if requested is None else os.path.join(base, requested)


def _agent_env(agent: object | None) -> Mapping[str, str | None]:
    """The calling agent's command environment overlay (`AgentLoop.env`: the settings `env` block,
    `CLAUDE_ENV_FILE` exports), empty without one."""
    env = getattr(agent, "env", None)
    return dict(env) if isinstance(env, Mapping) else {}


def _label(command: str) -> str:
    label = " ".join(command.split())
    return label if len(label) <= _LABEL_MAX else label[: _LABEL_MAX - 1] + "…"


async def _outcome(process: ShellProcess) -> JobOutcome:
    from ..jobs.model import JobOutcome, JobStatus  # a background job: issue 36
    from .records import ProcessStatus

    status = await process.done
    if process.status is ProcessStatus.KILLED:
        detail = f"signal: {status.signal_name}" if status.signal_name else "killed before exit"
        return JobOutcome(JobStatus.KILLED, detail)
    return JobOutcome(JobStatus.COMPLETED, f"exit code: {status.exit_code or 0}")


async def _run(
    shell: ShellExecutor, request: ResolvedShellRequest, exec: ToolRunContext
) -> ShellRunResult:
    try:
        result = await shell.run(request, signal=exec.signal)
    except SpawnAbortedError:
        raise ToolCallAborted() from None
    if result.aborted:
        raise ToolCallAborted()
    return result


def _foreground(result: ShellRunResult, sandbox: SandboxPolicy) -> ForegroundValue:
    return {
        "kind": "foreground",
        "exit_code": result.exit_code,
        "signal": result.signal_name,
        "timed_out": result.timed_out,
        "aborted": result.aborted,
        "timeout_ms": result.timeout_ms,
        "stdout": stream_value(result.stdout),
        "stderr": stream_value(result.stderr),
        "sandbox": sandbox.describe(),
    }


def _denial(request: ResolvedShellRequest, result: ShellRunResult) -> str | None:
    """The sandbox's note when the command failed in a way the sandbox may have caused."""
    if result.timed_out or (result.exit_code == 0 and result.signal_name is None):
        return None
    from ..sandbox.denials import sandbox_denial  # a failed command: issue 36

    writable = (
        ()
        if request.sandbox.mode is not SandboxMode.WORKSPACE_WRITE
        else (
            request.workspace,
            *request.sandbox.writable_roots,
        )
    )
    return sandbox_denial(
        request.sandbox,
        exit_code=result.exit_code,
        output=f"{result.stdout.text}\n{result.stderr.text}",
        writable=writable,
    )


def _bound_hit(request: ResolvedShellRequest, result: ShellRunResult) -> str | None:
    """The note naming the sandbox's bound (processes, tmpfs size) the command hit: for certain
    when the kernel says so (its cgroup), else read from a failed command's output."""
    if not request.sandbox.sandboxed:
        return None
    if result.bound_hit == "max_processes":
        return bound_note(request.sandbox.bounds, "max_processes")
    if not result.timed_out and result.exit_code == 0 and result.signal_name is None:
        return None  # a fork bomb retries until its deadline: a timed-out one is read too
    return bound_hit(request.sandbox.bounds, output=f"{result.stdout.text}\n{result.stderr.text}")


_ESCAPED: Final = "The user allowed running it once outside the sandbox; this is that run's result"
_UNESCAPED: Final[dict[str, str]] = {
    "rejected": "The user declined to run it outside the sandbox",
    "cancelled": "The question to run it outside the sandbox was cancelled",
    "unavailable": (
        "Nobody can approve running it outside the sandbox here: if the task needs it, say so; "
        "the user can add the path to the sandbox's writable_roots or run tether with "
        "--sandbox danger-full-access"
    ),
}


def bash_tool(ctx: Context, config: Config) -> ToolDefinition:
    """The `bash` definition bound to `ctx` (`ctx.shell` now, `ctx.jobs` at call time)."""
    shell: ShellExecutor = ctx.shell
    background_enabled = config.enable_run_in_background

    async def start_background(
        request: ShellRequest, command: str, exec: ToolRunContext
    ) -> BackgroundValue:
        from ..jobs.model import JobHooks, JobStart  # the first background job: issue 36
        from ..jobs.registry import JobRegistry

        jobs = ctx.get("jobs")
        if not isinstance(jobs, JobRegistry):
            raise RuntimeError('background jobs unavailable: load the "jobs" plugin')
        signal = exec.signal
        if signal.aborted:
            raise ToolCallAborted()
        resolved = shell.resolve(request)

        async def run() -> JobHooks:
            process = await shell.start(resolved, signal=signal)
            return JobHooks(
                cancel=lambda _reason: process.kill(),
                done=asyncio.ensure_future(_outcome(process)),
                read_output=lambda: render_background_read(process.read_output()),
            )

        try:
            job_id = await jobs.start(
                JobStart(kind="bash", label=_label(command), owner=exec.agent, run=run),
                signal=signal,
            )
        except SpawnAbortedError:
            raise ToolCallAborted() from None
        if signal.aborted:  # cancelled while starting: the model will never see this id
            jobs.kill(job_id, exec.agent, "tool call aborted")
            raise ToolCallAborted()
        return {"kind": "background", "job_id": job_id}

    async def execute(args: BashParameters, exec: ToolRunContext) -> BashValue:
        from .records import ShellRequest  # the first call: issue 36

        _check(args)
        request = ShellRequest(
            command=args.command,
            workdir=_workdir(args.workdir, exec.agent),
            timeout_ms=args.timeout_ms,
            env=_agent_env(exec.agent),
        )
        if background_enabled:  # the arguments are `BashBackgroundParameters`
            if cast("BashBackgroundParameters", args).run_in_background:
                return await start_background(request, args.command, exec)
        elif (args.model_extra or {}).get("run_in_background") is True:
            raise ValueError(
                "run_in_background is disabled for this deployment "
                "(enable_run_in_background: false)"
            )
        resolved = shell.resolve(request)
        result = await _run(shell, resolved, exec)
        value = _foreground(result, resolved.sandbox)
        hit = _bound_hit(resolved, result)
        if hit is not None:  # leaving the sandbox would not help: say which bound it hit
            value["sandbox_note"] = hit
            return value
        note = _denial(resolved, result)
        if note is None:
            return value
        outcome = await ask_to_leave_sandbox(ctx, exec, note)
        if outcome != "allowed-once":
            value["sandbox_note"] = f"{note}. {_UNESCAPED[outcome]}"
            return value
        escaped = replace(resolved, sandbox=FULL_ACCESS)
        value = _foreground(await _run(shell, escaped, exec), FULL_ACCESS)
        value["sandbox_note"] = f"{note}. {_ESCAPED}"
        return value

    return define_tool(
        name="bash",
        description=_DESCRIPTION + (_BACKGROUND_ON if background_enabled else _BACKGROUND_OFF),
        parameters=_BACKGROUND_ARGS if background_enabled else _FOREGROUND_ARGS,
        output=ToolOutput(schema=BashValue, render=_render, presentation_meta=_presentation),
        execute=execute,
    )


def apply(ctx: Context, config: Config) -> None:
    """Register the `bash` tool (unregistered when the plugin is disposed)."""
    ctx.tools.register(bash_tool(ctx, config))

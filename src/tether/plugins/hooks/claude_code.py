"""The Claude Code hook bridge, plugin `hooks-claude-code` (spec §5.3): a user's existing Claude
Code command hooks run, unchanged, at tether's interception points.

Mount: `await ctx.plugin(tether.plugins.hooks.claude_code, {...})` (entry point
`hooks-claude-code`; `inject = ["shell"]`). Config (`Config`):

    config_path              a hooks.json or settings file (or a list); relative to project_dir
    discover (true)          also read .claude/settings.json and .claude/settings.local.json
                             under project_dir, and ~/.claude/settings.json
    project_dir              the project root (default: the process cwd); exported to every
                             hook as CLAUDE_PROJECT_DIR and substituted for ${CLAUDE_PROJECT_DIR}
    plugin_root              substituted for ${CLAUDE_PLUGIN_ROOT}, exported as well
    default_timeout_ms       600000: a hook's timeout when it sets no `timeout` (seconds)
    stderr_summary_max_chars 500: how much stderr a `hook/result` event keeps
    tool_names               Claude Code name → tether tool name (`DEFAULT_TOOL_NAMES`)
    sandbox                  danger-full-access: hooks are the user's own configuration, so
                             they are contained (their own PID namespace, ended with tether)
                             but not sandboxed; a mode or `{mode, writable_roots,
                             network_access}` sandboxes them (docs/sandbox.md)

Files are read once, at mount. A file that exists (or is configured) but cannot be used — not
readable, not JSON, not an object, a `hooks` that is not an object, an invalid regex matcher —
fails the mount with one `ConfigError` line naming the file and the problem
(`tether.plugins.hooks.settings.settings_error`): a hook nobody runs is a policy nobody applies,
so tether does not run without it. Without any hooks the plugin registers nothing.

Points (Claude Code event → tether event):

    PreToolUse        tools/pre-execute      matcher: the Claude Code tool name. Merged deny
                      (exit 2 included) ⇒ Deny(reason or "blocked by PreToolUse hook"), which
                      the model sees as `Error: <reason>`; ask ⇒ Ask(reason), combined with
                      the rest of the waterfall (deny > ask > allow); allow or nothing ⇒ next()
                      (a hook's allow does not pre-approve anything).
    PostToolUse       tools/post-execute     successes only. Merged deny ⇒ Block(feedback =
                      reason or "blocked by PostToolUse hook"); additional context rides the
                      decision (prepended to the downstream one's contexts).
    UserPromptSubmit  agent/prompt           deny ⇒ the prompt is rejected (the turn ends
                      `blocked`, no model request); context (JSON additionalContext or plain
                      stdout) is injected after the prompt.
    Stop              agent/turn-stopping    deny ⇒ the turn continues with a user message
                      (reason or "continue: blocked by Stop hook"); `stop_hook_active` is true
                      once a Stop hook has continued this turn.
    SessionStart      agent/session-start    matcher: `startup` or `resume`; context injected.
    SubagentStart     subagent/start         matcher: the subagent type (`general-purpose`,
                      a `.claude/agents` name); payload `agent_id` (the child's session id) and
                      `agent_type`; `additionalContext` joins the child's first request.
    SubagentStop      subagent/end           after a child's turn that was not aborted; payload
                      `agent_id`, `agent_type`, `stop_hook_active: false` and
                      `agent_transcript_path` (the child's transcript); observe only.

A subagent (an agent loop with a `parent`) runs no SessionStart, UserPromptSubmit or Stop hooks
— as in Claude Code, its start and end are SubagentStart and SubagentStop; its tool calls run
PreToolUse and PostToolUse like any other. The session fields of a Subagent* payload are the
parent's.

Every payload has `session_id`, `transcript_path`, `cwd`, `permission_mode` (the `permissions`
service's mode — `default`, `acceptEdits`, `dontAsk`, `bypassPermissions` — or
`bypassPermissions` when nothing polices calls) and `hook_event_name`. `transcript_path` is a
Claude Code-format transcript beside the session (`transcript.py`), brought up to date (appended,
fsynced) before each hook runs. `PostToolUse`'s `tool_response` has Claude Code's per-tool shape
(`tool_response.py`). The settings `env` blocks (`environment.py`) reach every hook and, through
the agent's command environment (`AgentLoop.env`), every bash call; `SessionStart` hooks get
`CLAUDE_ENV_FILE` (`claude-env.sh` beside the session), and what the file exports joins that
environment for the session's later bash calls.

Hooks of one point run serially in config order, with cwd = the session's cwd, env
CLAUDE_PROJECT_DIR, and the point's signal (a tool call's or the turn's): cancelling it kills the
running hook. Each run is recorded as `hook/invoked` / `hook/result` when the agent has a session
with an open turn. Hook context messages are user messages with source `{"kind": "plugin", "plugin":
"hooks-claude-code"}`. Exit codes other than 0 and 2, timeouts and kills are non-blocking failures,
recorded with decision `error`. What a person should see reaches the screen, not only the log:
through `agent.notify(source, text)` (a `Notice` event the front end shows; without one, a log
warning) go a failure (`exited 1 (non-blocking): <first stderr line>`, `was killed by SIGKILL`,
`timed out after …`), the stderr of a hook that succeeded (its warnings, up to 5 lines), its
`systemMessage`, and an `updatedInput` tether ignores; `source` is `<Event> hook <script>`
(`PostToolUse hook lint.sh`).
"""

from __future__ import annotations

import logging
import math
import os
import shlex
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...core.errors import error_message
from ...core.json import JsonValue
from ...core.signals import AbortSignal
from ...core.timeout import MAX_TIMER_DELAY_MS, format_ms
from ...kernel import Context
from ...tools.decisions import Accept, Ask, Block, Deny, PostToolDecision, PreToolDecision
from ...tools.execution import ToolExecution
from ...tools.results import (
    ToolExecutionResult,
    ToolSuccess,
    UserMessage,
    text_content,
    user_message,
)
from ..sandbox.policy import SandboxMode, SandboxSettings
from ..shell.seam import ShellRequest
from .claude_config import ClaudeHookSet, ConfiguredHook, HookConfigError, parse_claude_hooks
from .environment import ENV_FILE_SCRIPT, env_file_changes, settings_env
from .journal import HookJournal, session_of
from .matcher import matches
from .merge import MergedHookOutcome, merge_hook_outputs
from .names import DEFAULT_TOOL_NAMES, ToolNames, claude_tool_input
from .output import HookOutput
from .precedence import strictest
from .runner import HookRun, HookShell, run_hook
from .settings import claude_settings_paths, load_settings, settings_error
from .tool_response import claude_tool_response
from .transcript import TRANSCRIPT_NAME, ClaudeTranscript

__all__ = [
    "HOOK_CONTEXT_SOURCE",
    "ClaudeCodeBridge",
    "Config",
    "PointOutcome",
    "apply",
    "inject",
    "load_hook_set",
    "name",
]

name: Final = "hooks-claude-code"
inject: Final = ("shell",)

HOOK_CONTEXT_SOURCE: Final[Mapping[str, JsonValue]] = {
    "kind": "plugin",
    "plugin": "hooks-claude-code",
}

_log = logging.getLogger("tether.plugins.hooks")


class Config(BaseModel):
    """See the module note."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    config_path: str | list[str] | None = None
    discover: bool = True
    project_dir: str | None = None
    plugin_root: str | None = None
    default_timeout_ms: float = 600_000
    stderr_summary_max_chars: int = 500
    tool_names: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_TOOL_NAMES))
    sandbox: SandboxSettings = SandboxSettings(mode=SandboxMode.DANGER_FULL_ACCESS.value)

    @field_validator("default_timeout_ms")
    @classmethod
    def _timeout(cls, value: float) -> float:
        if not (math.isfinite(value) and 0 < value <= MAX_TIMER_DELAY_MS):
            raise ValueError(
                "hooks-claude-code: default_timeout_ms must be a positive finite number no "
                f"greater than {MAX_TIMER_DELAY_MS}"
            )
        return value

    @field_validator("sandbox")
    @classmethod
    def _no_env_policy(cls, value: SandboxSettings) -> SandboxSettings:
        if "env" in value.model_fields_set:  # hooks run through the shell, with its policy
            raise ValueError(
                "hooks-claude-code: sandbox.env is not used here; hooks get the shell's "
                "environment policy (tether.yml's sandbox.env) and the settings files' env"
            )
        return value

    @field_validator("stderr_summary_max_chars")
    @classmethod
    def _summary(cls, value: int) -> int:
        if value < 1:
            raise ValueError(
                "hooks-claude-code: stderr_summary_max_chars must be a positive integer"
            )
        return value


def _config_paths(config: Config, project_dir: Path, home: Path | None) -> list[tuple[Path, bool]]:
    """(path, required): the configured files, then the discovered ones."""
    explicit = config.config_path
    listed = [explicit] if isinstance(explicit, str) else list(explicit or ())
    paths: list[tuple[Path, bool]] = [(project_dir / p, True) for p in listed]
    if config.discover:
        paths += [(p, False) for p in claude_settings_paths(project_dir, home)]
    return paths


def load_settings_env(
    config: Config, project_dir: Path, home: Path | None = None
) -> dict[str, str]:
    """The merged settings `env` blocks: user, project, local, then configured files."""
    paths = _config_paths(config, project_dir, home)
    discovered = [p for p, required in paths if not required]
    configured = [p for p, required in paths if required]
    return settings_env([*reversed(discovered), *configured])


def load_hook_set(config: Config, project_dir: Path, home: Path | None = None) -> ClaudeHookSet:
    """Read every configured and discovered file. Raises ConfigError for a file that cannot be
    used (see the module note)."""
    hooks = ClaudeHookSet()
    paths = _config_paths(config, project_dir, home)
    substitutions = {"CLAUDE_PROJECT_DIR": str(project_dir)}
    if config.plugin_root is not None:
        substitutions["CLAUDE_PLUGIN_ROOT"] = config.plugin_root
    seen: set[str] = set()
    for path, required in paths:
        key = os.path.realpath(path)
        if key in seen or (not required and not path.is_file()):
            continue
        seen.add(key)
        document = load_settings(path)
        try:
            groups = parse_claude_hooks(document, substitutions=substitutions)
        except HookConfigError as exc:
            raise settings_error(path, str(exc)) from None
        hooks.add(str(path), groups)
    return hooks


@dataclass(frozen=True, slots=True)
class PointOutcome:
    """The merged outcome of one point and each hook's own output, in run order."""

    merged: MergedHookOutcome
    outputs: tuple[HookOutput, ...]

    def contexts(self, *, plain_stdout: bool = False) -> list[str]:
        """`additionalContext`s, plus (`plain_stdout`) each exit-0 hook's non-JSON stdout."""
        found = list(self.merged.additional_context)
        if plain_stdout:
            found += [
                o.stdout for o in self.outputs if o.exit_code == 0 and o.stdout and not o.structured
            ]
        return found


_NOTHING: Final = PointOutcome(MergedHookOutcome(), ())


def _short(command: str) -> str:
    line = " ".join(command.split())
    return line if len(line) <= 200 else line[:199] + "…"


def _hook_name(command: str) -> str:
    """How a person recognizes a hook: its script's file name (`lint.sh` for
    `"$CLAUDE_PROJECT_DIR"/.claude/hooks/lint.sh --fix`), else the command's first word."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    script = next((w for w in words if "/" in w), None)
    if script is not None:
        return os.path.basename(script.rstrip("/")) or script
    return words[0] if words else _short(command)


def _text_of(blocks: Sequence[Mapping[str, JsonValue]]) -> str:
    return "".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )


def _agent_cwd(agent: object | None) -> str | None:
    session = session_of(agent)
    cwd = getattr(getattr(session, "header", None), "cwd", None)
    if isinstance(cwd, str):
        return cwd
    settings_cwd = getattr(getattr(agent, "settings", None), "cwd", None)
    return None if settings_cwd is None else str(settings_cwd)


def _agent_env(agent: object | None) -> dict[str, str | None] | None:
    """The agent's command environment overlay (`AgentLoop.env`), which its bash calls apply."""
    env = getattr(agent, "env", None)
    return env if isinstance(env, dict) else None


def _is_subagent(agent: object) -> bool:
    """A child agent loop (it has a `parent`): Claude Code runs no session-level hooks for it."""
    return getattr(agent, "parent", None) is not None


def _session_id(agent: object) -> str:
    session_id = getattr(session_of(agent), "id", None)
    return session_id if isinstance(session_id, str) else ""


def _inject(agent: object, contexts: list[str]) -> None:
    inject_into = getattr(agent, "inject", None)
    if contexts and callable(inject_into):
        inject_into(_context_message(contexts))


def _context_message(contexts: list[str]) -> UserMessage:
    blocks = [block for text in contexts for block in text_content(text)]
    return user_message(blocks, HOOK_CONTEXT_SOURCE)


class ClaudeCodeBridge:
    """Runs the loaded hooks at tether's points (see the module note)."""

    def __init__(
        self,
        shell: HookShell,
        config: Config,
        hooks: ClaudeHookSet,
        project_dir: Path,
        *,
        env: Mapping[str, str] | None = None,
        ctx: Context | None = None,
    ) -> None:
        self._shell = shell
        self._config = config
        self._hooks = hooks
        self._project_dir = str(project_dir)
        self._sandbox = config.sandbox.policy(self._project_dir)
        self._names = ToolNames(config.tool_names)
        self._selected: dict[tuple[str, str], tuple[tuple[str | None, ConfiguredHook], ...]] = {}
        self._env = dict(env or {})
        self._ctx = ctx
        self._transcripts: dict[str, ClaudeTranscript] = {}

    def register(self, ctx: Context) -> None:
        """Listen only at the points that have hooks (and at session start for a settings
        `env` block, which the agent's bash calls apply)."""
        events = set(self._hooks.events())
        if self._env:
            events.add("SessionStart")
        points: list[tuple[str, str, Callable[..., Awaitable[object]]]] = [
            ("PreToolUse", "tools/pre-execute", self.pre_tool_use),
            ("PostToolUse", "tools/post-execute", self.post_tool_use),
            ("UserPromptSubmit", "agent/prompt", self.user_prompt_submit),
            ("Stop", "agent/turn-stopping", self.stop),
            ("SessionStart", "agent/session-start", self.session_start),
            ("SubagentStart", "subagent/start", self.subagent_start),
            ("SubagentStop", "subagent/end", self.subagent_stop),
        ]
        for point, event, listener in points:
            if point in events:
                ctx.on(event, listener)

    # -- tool points ---------------------------------------------------------------------------

    async def pre_tool_use(
        self, exec: ToolExecution, next: Callable[[], Awaitable[PreToolDecision]]
    ) -> PreToolDecision:
        tool_name = self._names.claude_name(exec.name)
        if not self._select("PreToolUse", tool_name) or exec.signal.aborted:
            return await next()
        payload = {
            "tool_name": tool_name,
            "tool_input": claude_tool_input(exec.name, exec.arguments),
            "tool_use_id": exec.call_id,
        }
        outcome = await self.run_point(
            "PreToolUse", tool_name, payload, agent=exec.agent, signal=exec.signal
        )
        merged = outcome.merged
        if merged.decision == "deny":
            return Deny(merged.reason or "blocked by PreToolUse hook")
        downstream = await next()
        if merged.decision == "ask":
            return strictest(Ask(merged.reason), downstream)
        return downstream

    async def post_tool_use(
        self,
        exec: ToolExecution,
        result: ToolExecutionResult,
        next: Callable[[], Awaitable[PostToolDecision]],
    ) -> PostToolDecision:
        tool_name = self._names.claude_name(exec.name)
        if result.is_error or not self._select("PostToolUse", tool_name) or exec.signal.aborted:
            return await next()
        payload = {
            "tool_name": tool_name,
            "tool_input": claude_tool_input(exec.name, exec.arguments),
            "tool_use_id": exec.call_id,
            "tool_response": claude_tool_response(
                exec.name,
                exec.arguments,
                result.value if isinstance(result, ToolSuccess) else None,
                _text_of(result.content),
            ),
        }
        outcome = await self.run_point(
            "PostToolUse", tool_name, payload, agent=exec.agent, signal=exec.signal
        )
        contexts = outcome.contexts()
        context = (_context_message(contexts),) if contexts else ()
        if outcome.merged.decision == "deny":
            reason = outcome.merged.reason or "blocked by PostToolUse hook"
            return Block(feedback=text_content(reason), additional_contexts=context)
        downstream = await next()
        if context and isinstance(downstream, Accept | Block):
            return replace(
                downstream, additional_contexts=(*context, *downstream.additional_contexts)
            )
        return downstream

    # -- agent points --------------------------------------------------------------------------

    async def user_prompt_submit(
        self, agent: object, message: UserMessage, signal: AbortSignal
    ) -> str | None:
        """`agent/prompt`: a rejection reason, or None (contexts are injected into the agent)."""
        if _is_subagent(agent):
            return None
        payload = {"prompt": _text_of(message.content)}
        outcome = await self.run_point("UserPromptSubmit", "", payload, agent=agent, signal=signal)
        if outcome.merged.decision == "deny":
            return outcome.merged.reason or "blocked by UserPromptSubmit hook"
        _inject(agent, outcome.contexts(plain_stdout=True))
        return None

    async def stop(
        self, agent: object, turn: int, stop_hook_active: bool, signal: AbortSignal
    ) -> UserMessage | None:
        """`agent/turn-stopping`: a message that continues the turn, or None to let it end."""
        if _is_subagent(agent):
            return None
        payload = {"stop_hook_active": stop_hook_active}
        outcome = await self.run_point("Stop", "", payload, agent=agent, signal=signal)
        if outcome.merged.decision != "deny":
            return None
        text = outcome.merged.reason or "continue: blocked by Stop hook"
        return user_message(text, HOOK_CONTEXT_SOURCE)

    async def session_start(self, agent: object, source: str, signal: AbortSignal) -> None:
        """`agent/session-start`: the settings `env` block joins the agent's command
        environment; hooks run with `CLAUDE_ENV_FILE`, whose exports join it too; contexts are
        injected into the agent; it cannot block."""
        agent_env = _agent_env(agent)
        if agent_env is not None:
            agent_env.update(self._env)
        if _is_subagent(agent) or not self._select("SessionStart", source):
            return
        env_file = self._env_file(agent)
        try:
            payload = {"source": source}
            outcome = await self.run_point(
                "SessionStart",
                source,
                payload,
                agent=agent,
                signal=signal,
                env={"CLAUDE_ENV_FILE": str(env_file)},
            )
            if agent_env is not None and env_file.stat().st_size and not signal.aborted:
                agent_env.update(await self._sourced(env_file, agent_env, agent, signal))
        finally:
            if session_of(agent) is None:
                env_file.unlink(missing_ok=True)
        _inject(agent, outcome.contexts(plain_stdout=True))

    async def subagent_start(
        self, parent: object, child: object, agent_type: str, signal: AbortSignal
    ) -> None:
        """`subagent/start`: contexts join the child's first request; it cannot block."""
        if not self._select("SubagentStart", agent_type):
            return
        payload = {"agent_id": _session_id(child), "agent_type": agent_type}
        outcome = await self.run_point(
            "SubagentStart", agent_type, payload, agent=parent, signal=signal
        )
        _inject(child, outcome.contexts())

    async def subagent_stop(
        self,
        parent: object,
        child: object,
        agent_type: str,
        outcome: object,
        signal: AbortSignal,
    ) -> None:
        """`subagent/end`: observe only."""
        if not self._select("SubagentStop", agent_type):
            return
        payload = {
            "agent_id": _session_id(child),
            "agent_type": agent_type,
            "stop_hook_active": False,
            "agent_transcript_path": self._transcript_path(child, session_of(child)),
        }
        await self.run_point("SubagentStop", agent_type, payload, agent=parent, signal=signal)

    def _env_file(self, agent: object) -> Path:
        """An empty `CLAUDE_ENV_FILE`: `claude-env.sh` beside the session, or a temp file."""
        path = getattr(session_of(agent), "path", None)
        if isinstance(path, Path):
            env_file = path.parent / "claude-env.sh"
            env_file.parent.mkdir(parents=True, exist_ok=True)
            env_file.write_text("")
            return env_file
        fd, name = tempfile.mkstemp(prefix="tether-claude-env-", suffix=".sh")
        os.close(fd)
        return Path(name)

    async def _sourced(
        self,
        env_file: Path,
        agent_env: Mapping[str, str | None],
        agent: object,
        signal: AbortSignal,
    ) -> Mapping[str, str | None]:
        """What sourcing `env_file` changes in the environment bash commands get."""
        request = ShellRequest(
            command=ENV_FILE_SCRIPT,
            workdir=_agent_cwd(agent) or self._project_dir,
            stdout_max_bytes=4_000_000,
            env={**agent_env, "CLAUDE_ENV_FILE": str(env_file)},
            sandbox=self._sandbox,
        )
        try:
            result = await self._shell.run(request, signal=signal)
        except Exception as exc:
            _log.warning(
                "hooks-claude-code: could not read CLAUDE_ENV_FILE: %s", error_message(exc)
            )
            return {}
        changes = env_file_changes(result.stdout.text)
        if changes is None or result.exit_code != 0:
            _log.warning(
                "hooks-claude-code: could not read CLAUDE_ENV_FILE %s (exit %s)",
                env_file,
                result.exit_code,
            )
            return {}
        return {k: v for k, v in changes.items() if k != "CLAUDE_ENV_FILE"}

    def _permission_mode(self) -> str:
        """The `permissions` service's mode (Claude Code's names); `bypassPermissions` when
        nothing polices tool calls."""
        permissions = None if self._ctx is None else self._ctx.get("permissions")
        mode = getattr(permissions, "mode", None)
        return mode if isinstance(mode, str) else "bypassPermissions"

    def _transcript_path(self, agent: object | None, session: object | None) -> str:
        """Bring the session's Claude Code-format transcript up to date; its path."""
        path = getattr(session, "path", None)
        if not isinstance(path, Path) or not hasattr(session, "events"):
            return ""
        key = str(path)
        transcript = self._transcripts.get(key)
        if transcript is None:
            transcript = ClaudeTranscript(path.parent / TRANSCRIPT_NAME, names=self._names)
            self._transcripts[key] = transcript
        model = getattr(getattr(agent, "llm", None), "model", "")
        try:
            return str(transcript.sync(session, model=model if isinstance(model, str) else ""))
        except OSError as exc:
            _log.warning("hooks-claude-code: could not write the transcript: %s", exc)
            return str(transcript.path)

    # -- running a point -----------------------------------------------------------------------

    def _select(self, point: str, query: str) -> tuple[tuple[str | None, ConfiguredHook], ...]:
        key = (point, query)
        selected = self._selected.get(key)
        if selected is None:
            hooks = self._hooks.groups.get(point, ())
            selected = tuple((m, h) for m, h in hooks if matches(m, query, "claude-code"))
            self._selected[key] = selected
        return selected

    async def run_point(
        self,
        point: str,
        query: str,
        extra: Mapping[str, object],
        *,
        agent: object | None,
        signal: AbortSignal,
        env: Mapping[str, str] | None = None,
    ) -> PointOutcome:
        """Run every hook of `point` whose matcher selects `query`, serially; merge them.
        Hooks get the settings `env` block, `CLAUDE_PROJECT_DIR` and `env`."""
        selected = self._select(point, query)
        if not selected:
            return _NOTHING
        session = session_of(agent)
        cwd = _agent_cwd(agent)
        session_id = getattr(session, "id", None)
        payload: dict[str, object] = {
            "session_id": session_id if isinstance(session_id, str) else "",
            "transcript_path": self._transcript_path(agent, session),
            "cwd": cwd or self._project_dir,
            "permission_mode": self._permission_mode(),
            "hook_event_name": point,
            **extra,
        }
        hook_env = {**self._env, "CLAUDE_PROJECT_DIR": self._project_dir, **(env or {})}
        if self._config.plugin_root is not None:
            hook_env["CLAUDE_PLUGIN_ROOT"] = self._config.plugin_root
        journal = HookJournal(agent, "claude-code", self._config.stderr_summary_max_chars)
        outputs: list[HookOutput] = []
        for matcher, configured in selected:
            if signal.aborted:
                break
            journal.invoked(point, matcher, configured.handler_id)
            run = await run_hook(
                self._shell,
                configured.hook,
                payload,
                signal=signal,
                cwd=cwd or self._project_dir,
                env=hook_env,
                default_timeout_ms=self._config.default_timeout_ms,
                expected_event_name=point,
                sandbox=self._sandbox,
            )
            journal.result(
                point, configured.handler_id, run.output, run.duration_ms, cancelled=run.aborted
            )
            limit_ms = configured.hook.timeout_ms(self._config.default_timeout_ms)
            source = f"{point} hook {_hook_name(configured.hook.command)}"
            _tell(agent, source, _notices(run, limit_ms))
            outputs.append(run.output)
        return PointOutcome(merge_hook_outputs(outputs), tuple(outputs))


def _notices(run: HookRun, limit_ms: float) -> list[str]:
    """What the person running the agent should see about one hook run: why it failed (it
    never blocks then), what it wrote to stderr on success (its warnings), its `systemMessage`,
    and what tether ignored."""
    output = run.output
    notices: list[str] = []
    if run.timed_out:
        notices.append(f"timed out after {format_ms(limit_ms)}ms and was killed (non-blocking)")
    elif run.aborted:
        return []
    elif run.killed_by is not None:
        notices.append(f"was killed by {run.killed_by} (non-blocking)")
    elif output.exit_code is None:
        notices.append(f"could not run (non-blocking): {output.stderr}")
    elif output.exit_code not in (0, 2):
        first = output.stderr.splitlines()[0] if output.stderr else "no stderr"
        notices.append(f"exited {output.exit_code} (non-blocking): {first}")
    elif output.exit_code == 0 and output.stderr:
        notices.append(_lines(output.stderr))
    if output.system_message is not None:
        notices.append(output.system_message)
    if output.updated_input is not None:
        notices.append("requested updatedInput, which tether does not honour yet (ignored)")
    return notices


def _lines(text: str, limit: int = 5) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    more = len(lines) - limit
    return "\n".join(lines[:limit] + ([f"… {more} more lines"] if more > 0 else []))


def _tell(agent: object | None, source: str, notices: list[str]) -> None:
    """Show `notices` to the person running `agent` (`agent.notify`: the front end's screen);
    without a front end, log them."""
    notify = getattr(agent, "notify", None)
    for text in notices:
        if callable(notify):
            notify(source, text)
        else:
            _log.warning("hooks-claude-code: %s: %s", source, text)


def apply(ctx: Context, config: Config) -> None:
    """Load the hook files and listen at the points that have hooks."""
    project_dir = Path(config.project_dir) if config.project_dir else Path.cwd()
    hooks = load_hook_set(config, project_dir)
    env = load_settings_env(config, project_dir)
    if not hooks.events() and not env:
        return
    bridge = ClaudeCodeBridge(ctx.shell, config, hooks, project_dir, env=env, ctx=ctx)
    bridge.register(ctx)
    _log.debug(
        "hooks-claude-code: loaded %s from %s",
        ", ".join(sorted(hooks.events())),
        ", ".join(hooks.sources) or "nothing",
    )

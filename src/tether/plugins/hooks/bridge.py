"""The hook bridge itself: `ClaudeCodeBridge` runs the loaded hooks at tether's points.

Owns the listeners of every point, each point's payload, running its selected hooks serially
(`runner.py`, or another `HookRunner`), journaling them and merging their outputs. The behaviour
is documented in the plugin's module note (`tether.plugins.hooks.claude_code`), which mounts a
bridge only when some hooks or a settings `env` block are configured (issue 36: a boot without
hooks imports none of this). Does not own loading the files (`loading.py`).
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from ...core.errors import error_message
from ...core.signals import AbortSignal
from ...kernel import Context, declare_event
from ...tools.decisions import (
    Accept,
    Ask,
    Block,
    Deny,
    PostToolDecision,
    PreExecuteNext,
    PreToolDecision,
)
from ...tools.execution import ToolExecution
from ...tools.results import (
    ToolExecutionResult,
    ToolSuccess,
    UserMessage,
    text_content,
    user_message,
)
from .agent_view import (
    HOOK_CONTEXT_SOURCE,
    agent_cwd,
    agent_env,
    context_message,
    inject_contexts,
    is_subagent,
    last_assistant_text,
    session_id_of,
    text_of,
)
from .callbacks import HookRunner
from .claude_config import (
    ClaudeHookSet,
    ConfiguredHook,
)
from .environment import ENV_FILE_SCRIPT, env_file_changes
from .journal import HookJournal, session_of
from .lifecycle import LifecyclePoints
from .loading import Config
from .matcher import matches
from .merge import MergedHookOutcome, merge_hook_outputs
from .names import ToolNames, claude_tool_input, tether_tool_input
from .notices import hook_name, run_notices, tell
from .output import HookOutput
from .precedence import strictest
from .runner import HookShell, run_hook
from .tool_response import claude_tool_response
from .transcript import TRANSCRIPT_NAME, ClaudeTranscript

__all__ = ["HOOK_CONTEXT_SOURCE", "ClaudeCodeBridge", "PointOutcome"]

_log = logging.getLogger("tether.plugins.hooks")

_CHANGES_INPUT: Final = frozenset({"allow", "ask"})
"""The PreToolUse decisions whose `updatedInput` is applied, as in Claude Code."""

_CLAUDE_ENV: Final[Mapping[str, str]] = {"CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "tether"}
"""Set for every hook, as Claude Code sets them (its entrypoint is `cli` or `sdk-cli`)."""


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


class ClaudeCodeBridge(LifecyclePoints):
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
        runner: HookRunner = run_hook,
    ) -> None:
        self._shell = shell
        self._run = runner
        self._config = config
        self._hooks = hooks
        self._project_dir = str(project_dir)
        self._sandbox = config.sandbox.policy(self._project_dir)
        self._names = ToolNames(config.tool_names)
        self._selected: dict[tuple[str, str], tuple[tuple[str | None, ConfiguredHook], ...]] = {}
        self._env = dict(env or {})
        self._ctx = ctx
        self._transcripts: dict[str, ClaudeTranscript] = {}
        self._durations: dict[str, int] = {}

    def register(self, ctx: Context) -> None:
        """Listen only at the points that have hooks (and at session start for a settings
        `env` block, which the agent's bash calls apply)."""
        events = set(self._hooks.events())
        if self._env:
            events.add("SessionStart")
        if "PostToolUseFailure" in events:
            events.add("PostToolUse")  # one tools/post-execute listener serves both
        points: list[tuple[str, str, Callable[..., Awaitable[object]]]] = [
            ("PreToolUse", "tools/pre-execute", self.pre_tool_use),
            ("PostToolUse", "tools/execute", self._timed),
            ("PostToolUse", "tools/post-execute", self.post_tool_use),
            ("UserPromptSubmit", "agent/prompt", self.user_prompt_submit),
            ("Stop", "agent/turn-stopping", self.stop),
            ("SessionStart", "agent/session-start", self.session_start),
            ("SessionEnd", "agent/session-end", self.session_end),
            ("PreCompact", "agent/pre-compact", self.pre_compact),
            ("PostCompact", "agent/post-compact", self.post_compact),
            ("Notification", "approval/notification", self.notification),
            ("PermissionRequest", "approval/permission-request", self.permission_request),
            ("SubagentStart", "subagent/start", self.subagent_start),
            ("SubagentStop", "subagent/end", self.subagent_stop),
        ]
        for point, event, listener in points:
            if point in events:
                ctx.on(declare_event(event), listener)  # agent/ events: declared by tether.agent
        if "PostToolUse" in events:
            ctx.on("tools/result", self._forget_duration)

    # -- tool points ---------------------------------------------------------------------------

    async def pre_tool_use(self, exec: ToolExecution, next: PreExecuteNext) -> PreToolDecision:
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
        changed = [o.updated_input for o in outcome.outputs if o.decision in _CHANGES_INPUT]
        if changed and changed[-1] is not None:  # the rest of the chain judges the new input
            downstream = await next(arguments=tether_tool_input(exec.name, changed[-1]))
        else:
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
        duration_ms = self._durations.pop(exec.call_id, 0)
        failure = self._failed(result)
        if failure is not None:
            return await self.post_tool_use_failure(exec, failure, duration_ms, next)
        if not self._select("PostToolUse", tool_name) or exec.signal.aborted:
            return await next()
        payload = {
            "tool_name": tool_name,
            "tool_input": claude_tool_input(exec.name, exec.arguments),
            "tool_use_id": exec.call_id,
            "tool_response": claude_tool_response(
                exec.name,
                exec.arguments,
                result.value if isinstance(result, ToolSuccess) else None,
                text_of(result.content),
            ),
            "duration_ms": duration_ms,
        }
        outcome = await self.run_point(
            "PostToolUse", tool_name, payload, agent=exec.agent, signal=exec.signal
        )
        contexts = outcome.contexts()
        context = (context_message(contexts),) if contexts else ()
        if outcome.merged.decision == "deny":
            reason = outcome.merged.reason or "blocked by PostToolUse hook"
            return Block(feedback=text_content(reason), additional_contexts=context)
        downstream = await next()
        if context and isinstance(downstream, Accept | Block):
            return replace(
                downstream, additional_contexts=(*context, *downstream.additional_contexts)
            )
        return downstream

    async def _timed(
        self, exec: ToolExecution, next: Callable[[], Awaitable[ToolExecutionResult]]
    ) -> ToolExecutionResult:
        """`tools/execute`: how long the call ran (PostToolUse's `duration_ms`)."""
        started = time.monotonic()
        try:
            return await next()
        finally:
            self._durations[exec.call_id] = round((time.monotonic() - started) * 1000)

    def _forget_duration(self, exec: ToolExecution, result: ToolExecutionResult) -> None:
        self._durations.pop(exec.call_id, None)

    # -- agent points --------------------------------------------------------------------------

    async def user_prompt_submit(
        self, agent: object, message: UserMessage, signal: AbortSignal
    ) -> str | None:
        """`agent/prompt`: a rejection reason, or None (contexts are injected into the agent)."""
        if is_subagent(agent):
            return None
        payload = {"prompt": text_of(message.content)}
        outcome = await self.run_point("UserPromptSubmit", "", payload, agent=agent, signal=signal)
        if outcome.merged.decision == "deny":
            return outcome.merged.reason or "blocked by UserPromptSubmit hook"
        inject_contexts(agent, outcome.contexts(plain_stdout=True))
        return None

    async def stop(
        self, agent: object, turn: int, stop_hook_active: bool, signal: AbortSignal
    ) -> UserMessage | None:
        """`agent/turn-stopping`: a message that continues the turn, or None to let it end."""
        if is_subagent(agent):
            return None
        payload = {
            "stop_hook_active": stop_hook_active,
            "last_assistant_message": last_assistant_text(agent),
        }
        outcome = await self.run_point("Stop", "", payload, agent=agent, signal=signal)
        if outcome.merged.decision != "deny":
            return None
        text = outcome.merged.reason or "continue: blocked by Stop hook"
        return user_message(text, HOOK_CONTEXT_SOURCE)

    async def session_start(self, agent: object, source: str, signal: AbortSignal) -> None:
        """`agent/session-start`: the settings `env` block joins the agent's command
        environment; hooks run with `CLAUDE_ENV_FILE`, whose exports join it too; contexts are
        injected into the agent; it cannot block."""
        command_env = agent_env(agent)
        if command_env is not None:
            command_env.update(self._env)
        if is_subagent(agent) or not self._select("SessionStart", source):
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
            if command_env is not None and env_file.stat().st_size and not signal.aborted:
                command_env.update(await self._sourced(env_file, command_env, agent, signal))
        finally:
            if session_of(agent) is None:
                env_file.unlink(missing_ok=True)
        inject_contexts(agent, outcome.contexts(plain_stdout=True))

    async def subagent_start(
        self, parent: object, child: object, agent_type: str, signal: AbortSignal
    ) -> None:
        """`subagent/start`: contexts join the child's first request; it cannot block."""
        if not self._select("SubagentStart", agent_type):
            return
        payload = {"agent_id": session_id_of(child), "agent_type": agent_type}
        outcome = await self.run_point(
            "SubagentStart", agent_type, payload, agent=parent, signal=signal
        )
        inject_contexts(child, outcome.contexts())

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
            "agent_id": session_id_of(child),
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
        from ..shell.seam import ShellRequest  # the shell's request: at the first run (issue 36)

        request = ShellRequest(
            command=ENV_FILE_SCRIPT,
            workdir=agent_cwd(agent) or self._project_dir,
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
        cwd = agent_cwd(agent)
        found_id = getattr(session, "id", None)
        session_id = found_id if isinstance(found_id, str) else ""
        payload: dict[str, object] = {
            "session_id": session_id,
            "transcript_path": self._transcript_path(agent, session),
            "cwd": cwd or self._project_dir,
            "permission_mode": self._permission_mode(),
            "hook_event_name": point,
            **extra,
        }
        turn = getattr(session, "open_turn", None)
        if session_id and isinstance(turn, int) and not isinstance(turn, bool):
            prompt = uuid.uuid5(uuid.NAMESPACE_URL, f"tether:{session_id}:{turn}")
            payload["prompt_id"] = str(prompt)
        hook_env = {
            **self._env,
            **_CLAUDE_ENV,
            "CLAUDE_PID": str(os.getpid()),
            "CLAUDE_CONFIG_DIR": str(Path.home() / ".claude"),
            "CLAUDE_CODE_SESSION_ID": session_id,
            "CLAUDE_PROJECT_DIR": self._project_dir,
            **(env or {}),
        }
        if self._config.plugin_root is not None:
            hook_env["CLAUDE_PLUGIN_ROOT"] = self._config.plugin_root
        journal = HookJournal(agent, "claude-code", self._config.stderr_summary_max_chars)
        outputs: list[HookOutput] = []
        for matcher, configured in selected:
            if signal.aborted:
                break
            journal.invoked(point, matcher, configured.handler_id)
            run = await self._run(
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
            source = f"{point} hook {hook_name(configured.hook.command)}"
            tell(agent, source, run_notices(run, limit_ms, point))
            outputs.append(run.output)
        return PointOutcome(merge_hook_outputs(outputs), tuple(outputs))

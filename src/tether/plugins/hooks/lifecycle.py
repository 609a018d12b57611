"""The Claude Code hook events around a session's life and its asks: SessionEnd, PreCompact,
PostCompact, Notification, PermissionRequest and PostToolUseFailure.

Owns `LifecyclePoints`, the part of the bridge (`tether.plugins.hooks.claude_code`) that
listens at these points and shapes each payload as Claude Code does; running the hooks is the
bridge's `run_point`. Points (Claude Code event → tether event, matcher subject, payload):

    SessionEnd          agent/session-end        reason ("clear" for /clear,
                                                 "prompt_input_exit" when the user leaves the
                                                 chat at its prompt, "other" when the agent
                                                 closes otherwise); `reason`; observe only
    PreCompact          agent/pre-compact        trigger ("manual" | "auto")
                                                 `trigger`, `custom_instructions`; observe only
    PostCompact         agent/post-compact       trigger; `trigger`, `compact_summary`
    Notification        approval/notification    notification_type ("permission_prompt",
                                                 "idle_prompt": the chat's prompt waited for
                                                 the user, `tether.cli.chat.idle`); `message`,
                                                 `notification_type`; observe only
    PermissionRequest   approval/permission-     the Claude Code tool name; `tool_name`,
                        request                  `tool_input`, `tool_use_id`. `decision:
                                                 {behavior: "allow"}` runs the call without
                                                 asking (with the last allowing hook's
                                                 `updatedInput` as the call's arguments,
                                                 checked by the pipeline as the model's are),
                                                 `"deny"` (or exit 2) refuses it with
                                                 `message` (stderr); nothing: ask as usual
    PostToolUseFailure  tools/post-execute       the tool name; `tool_name`, `tool_input`,
                        (failures of calls that  `tool_use_id`, `error` (the error text the
                        ran: not DENIED,         model reads), `is_interrupt`, `duration_ms`;
                        UNKNOWN_TOOL, ...)       `additionalContext` joins the result
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from ...core.signals import AbortSignal
from ...tools.decisions import Accept, Allow, Block, Deny, PostToolDecision
from ...tools.execution import ToolExecution
from ...tools.results import ToolExecutionResult, ToolFailure
from .agent_view import context_message, text_of
from .names import ToolNames, claude_tool_input, tether_tool_input

if TYPE_CHECKING:
    from .bridge import PointOutcome

__all__ = ["LifecyclePoints"]

_INTERRUPTED = frozenset({"ABORTED", "CANCELLED"})
_NEVER_RAN = frozenset({"DENIED", "ABORTED_BEFORE_DISPATCH", "UNKNOWN_TOOL", "INVALID_ARGS"})
"""Failures of calls that never ran (refused, unknown, invalid): no PostToolUseFailure."""


class LifecyclePoints:
    """See the module note. The bridge provides `_names`, `_select` and `run_point`."""

    _names: ToolNames

    def _select(self, point: str, query: str) -> tuple[object, ...]:
        raise NotImplementedError

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
        raise NotImplementedError

    async def session_end(self, agent: object, reason: str, signal: AbortSignal) -> None:
        """`agent/session-end`: observe only."""
        if getattr(agent, "parent", None) is None:
            await self.run_point(
                "SessionEnd", reason, {"reason": reason}, agent=agent, signal=signal
            )

    async def pre_compact(
        self, agent: object, trigger: str, focus: str, signal: AbortSignal
    ) -> None:
        """`agent/pre-compact`: observe only."""
        payload = {"trigger": trigger, "custom_instructions": focus}
        await self.run_point("PreCompact", trigger, payload, agent=agent, signal=signal)

    async def post_compact(
        self, agent: object, trigger: str, summary: str, signal: AbortSignal
    ) -> None:
        """`agent/post-compact`: observe only."""
        payload = {"trigger": trigger, "compact_summary": summary}
        await self.run_point("PostCompact", trigger, payload, agent=agent, signal=signal)

    async def notification(self, agent: object, kind: str, tool: str, signal: AbortSignal) -> None:
        """`approval/notification`: observe only."""
        if kind == "idle_prompt":
            message = "tether is waiting for your input"  # Claude Code: "Claude is waiting..."
        else:
            message = f"tether needs your permission to use {self._names.claude_name(tool)}"
        payload = {"message": message, "notification_type": kind}
        await self.run_point("Notification", kind, payload, agent=agent, signal=signal)

    async def permission_request(
        self, exec: ToolExecution, reason: str | None
    ) -> Allow | Deny | None:
        """`approval/permission-request`: a hook's allow or deny settles the ask."""
        tool_name = self._names.claude_name(exec.name)
        if not self._select("PermissionRequest", tool_name) or exec.signal.aborted:
            return None
        payload = {
            "tool_name": tool_name,
            "tool_input": claude_tool_input(exec.name, exec.arguments),
            "tool_use_id": exec.call_id,
        }
        outcome = await self.run_point(
            "PermissionRequest", tool_name, payload, agent=exec.agent, signal=exec.signal
        )
        merged = outcome.merged
        if merged.decision == "deny":
            return Deny(merged.reason or "denied by PermissionRequest hook")
        if merged.decision == "allow":
            changed = [o.updated_input for o in outcome.outputs if o.decision == "allow"]
            if changed and changed[-1] is not None:
                return Allow(arguments=tether_tool_input(exec.name, changed[-1]))
            return Allow()
        return None

    async def post_tool_use_failure(
        self,
        exec: ToolExecution,
        result: ToolFailure,
        duration_ms: int,
        next: Callable[[], Awaitable[PostToolDecision]],
    ) -> PostToolDecision:
        """A failed call: PostToolUseFailure hooks; their contexts join the result."""
        tool_name = self._names.claude_name(exec.name)
        ran = result.code not in _NEVER_RAN
        if not ran or not self._select("PostToolUseFailure", tool_name) or exec.signal.aborted:
            return await next()
        payload = {
            "tool_name": tool_name,
            "tool_input": claude_tool_input(exec.name, exec.arguments),
            "tool_use_id": exec.call_id,
            "error": text_of(result.content) or result.error.message,
            "is_interrupt": result.code in _INTERRUPTED,
            "duration_ms": duration_ms,
        }
        outcome = await self.run_point(
            "PostToolUseFailure", tool_name, payload, agent=exec.agent, signal=exec.signal
        )
        contexts = outcome.contexts()
        downstream = await next()
        if contexts and isinstance(downstream, Accept | Block):
            context = context_message(contexts)
            return replace(
                downstream, additional_contexts=(context, *downstream.additional_contexts)
            )
        return downstream

    def _failed(self, result: ToolExecutionResult) -> ToolFailure | None:
        return result if isinstance(result, ToolFailure) else None

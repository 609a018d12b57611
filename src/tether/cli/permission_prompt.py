"""`--permission-prompt-tool stdio`: every call that would ask is asked of the Claude Agent
SDK application (`can_use_tool`) over the control channel (issue 35).

Owns `PermissionPrompt`, an `approval/permission-request` listener: for a call the policy would
ask about it sends `{"subtype": "can_use_tool", "tool_name" (Claude Code's name), "input",
"tool_use_id", "permission_suggestions"}` and applies the answer:

    {"behavior": "allow", "updatedInput"}   the call runs; with an `updatedInput` different
                                            from the input, with that input (Claude Code's
                                            names mapped back: `tether_tool_input`), checked by
                                            the pipeline as the model's arguments are (guards,
                                            then the tool's validation: `INVALID_ARGS`, never
                                            run)
    {"behavior": "allow", "updatedPermissions": [addRules allow …]}
                                            the rules are added for the session
    {"behavior": "deny", "message", "interrupt"?}   DENIED with the message; `interrupt: true`
                                            also ends the turn
    an error response, no answer            DENIED with the error (fail closed)

Deny rules and hooks run before (a call they settle is never asked). Does not own the channel
(`tether.cli.stream_input`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from ..core.errors import error_message
from ..core.signals import AbortSignal
from ..plugins.hooks.names import claude_tool_input, tether_tool_input
from ..plugins.permissions import Permissions
from ..tools.decisions import Allow, Deny
from ..tools.execution import ToolExecution
from .output import CLAUDE_TOOL_NAMES

__all__ = ["PermissionPrompt"]

Send = Callable[..., Awaitable[Mapping[str, object]]]
"""`(request, *, timeout_ms, signal) -> response`."""

_NO_TIMEOUT_MS = 24 * 3600 * 1000.0  # a person may take long; the turn's signal ends the wait


@dataclass
class PermissionPrompt:
    """Asks the SDK application about calls that would ask (see the module note)."""

    send: Send
    permissions: Permissions | None
    interrupt: Callable[[], object]

    async def __call__(self, exec: ToolExecution, reason: str | None) -> Allow | Deny | None:
        if exec.signal.aborted:
            return None
        tool_input = claude_tool_input(exec.name, exec.arguments)
        rule = (
            self.permissions.suggest_rule(exec.name, exec.arguments)
            if self.permissions is not None
            else None
        )
        suggestions = (
            []
            if rule is None
            else [{"type": "addRules", "rules": [_rule(rule)], "behavior": "allow"}]
        )
        request: dict[str, object] = {
            "subtype": "can_use_tool",
            "tool_name": CLAUDE_TOOL_NAMES.claude_name(exec.name),
            "input": tool_input,
            "tool_use_id": exec.call_id,
            "permission_suggestions": suggestions,
        }
        if reason is not None:
            request["decision_reason"] = reason
        try:
            answer = await self.send(request, timeout_ms=_NO_TIMEOUT_MS, signal=exec.signal)
        except Exception as exc:
            return Deny(f"the application's permission check failed: {error_message(exc)}")
        return self._apply(answer, exec.name, tool_input, exec.signal)

    def _apply(
        self,
        answer: Mapping[str, object],
        exec_name: str,
        tool_input: Mapping[str, object],
        signal: AbortSignal,
    ) -> Allow | Deny:
        behavior = answer.get("behavior")
        if behavior == "allow":
            updated = answer.get("updatedInput")
            if updated is not None and not isinstance(updated, Mapping):
                return Deny("the application allowed this call with an input that is not an object")
            self._save(answer.get("updatedPermissions"))
            if updated is None or updated == tool_input:
                return Allow()
            return Allow(arguments=tether_tool_input(exec_name, dict(updated)))
        if behavior == "deny":
            if answer.get("interrupt") is True and not signal.aborted:
                self.interrupt()
            message = answer.get("message")
            return Deny(str(message) if message else "the application denied this call")
        return Deny(f"the application's answer {behavior!r} is neither allow nor deny")

    def _save(self, updates: object) -> None:
        """`addRules` allow updates become session rules (`Bash(git status:*)`)."""
        if self.permissions is None or not isinstance(updates, list):
            return
        for update in updates:
            if not isinstance(update, Mapping) or update.get("type") != "addRules":
                continue
            if update.get("behavior") != "allow":
                continue
            rules = update.get("rules")
            for value in rules if isinstance(rules, list) else []:
                if isinstance(value, Mapping) and isinstance(value.get("toolName"), str):
                    content = value.get("ruleContent")
                    name = str(value["toolName"])
                    self.permissions.allow(f"{name}({content})" if content else name)


def _rule(rule: str) -> dict[str, object]:
    """`Bash(git status:*)` as the SDK's `{"toolName", "ruleContent"}`."""
    name, _, rest = rule.partition("(")
    if not rest.endswith(")"):
        return {"toolName": rule}
    return {"toolName": name, "ruleContent": rest[:-1]}

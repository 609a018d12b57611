"""Decoding what a command hook said: its exit code, stdout and stderr (spec §5.2).

Owns `HookOutput` and `parse_hook_output`. The exit code is the protocol:

    2      block: `decision = "block"`, `reason` = trimmed stderr (when not empty); whatever is
           on stdout is ignored (stderr is authoritative)
    0      success; a trimmed stdout that starts with `{` is tried as JSON (malformed JSON or a
           non-object is tolerated: no structured fields, the text stays in `stdout`)
    other  a non-blocking error (None included: the hook died by a signal or was killed at its
           timeout): no decision, stderr recorded

Structured fields on exit 0: top level `continue` (bool), `stopReason`, `systemMessage`,
`reason` (str) and `decision` — only `approve` and `block` count at the top level. In
`hookSpecificOutput`, `hookEventName` is always recorded; when an `expected_event_name` is given
and the block names a different (or no) event, the rest of the block is discarded; otherwise
`permissionDecision` (`allow` | `deny` | `ask`) overrides the top-level decision,
`permissionDecisionReason` overrides `reason`, PermissionRequest's `decision: {behavior:
"allow" | "deny", message, updatedInput}` sets the decision (`message` the reason, an allow's
`updatedInput` object the input), and `additionalContext` (str) and `updatedInput` (object;
PreToolUse's, applied with an allow or ask) are read.
Unknown decision strings are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

__all__ = ["HookDecision", "HookOutput", "parse_hook_output"]

HookDecision: TypeAlias = Literal["approve", "block", "allow", "deny", "ask"]

_TOP_LEVEL_DECISIONS: Final = frozenset({"approve", "block"})
_PERMISSION_DECISIONS: Final = frozenset({"allow", "deny", "ask"})


@dataclass(frozen=True, slots=True)
class HookOutput:
    """One hook's decoded answer. `exit_code is None`: it died by a signal (timeouts included)
    or could not be run at all (then `stderr` says why)."""

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    decision: HookDecision | None = None
    reason: str | None = None
    continue_: bool | None = None
    stop_reason: str | None = None
    system_message: str | None = None
    hook_event_name: str | None = None
    additional_context: str | None = None
    updated_input: Mapping[str, object] | None = None
    structured: bool = False
    """Whether stdout was a JSON object (otherwise, on exit 0, it is plain text)."""

    @property
    def blocking(self) -> bool:
        """Whether this output blocks (`block` or `deny`)."""
        return self.decision in ("block", "deny")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def parse_hook_output(
    exit_code: int | None, stdout: str, stderr: str, expected_event_name: str | None = None
) -> HookOutput:
    """Decode one run (see the module note). Never raises."""
    out, err = stdout.strip(), stderr.strip()
    if exit_code == 2:
        return HookOutput(exit_code, out, err, decision="block", reason=err or None)
    if exit_code != 0:
        return HookOutput(exit_code, out, err)
    document: object = None
    if out.startswith("{"):
        try:
            document = json.loads(out)
        except ValueError:
            document = None
    if not isinstance(document, dict):
        return HookOutput(exit_code, out, err)
    top = document.get("decision")
    decision: HookDecision | None = top if top in _TOP_LEVEL_DECISIONS else None
    reason = _text(document.get("reason"))
    cont = document.get("continue")
    event_name = additional = None
    updated: Mapping[str, object] | None = None
    specific = document.get("hookSpecificOutput")
    if isinstance(specific, dict):
        event_name = _text(specific.get("hookEventName"))
        if expected_event_name is None or event_name == expected_event_name:
            permission = specific.get("permissionDecision")
            if permission in _PERMISSION_DECISIONS:
                decision = permission
            verdict = specific.get("decision")  # PermissionRequest: {behavior, message}
            if isinstance(verdict, dict) and verdict.get("behavior") in ("allow", "deny"):
                decision = verdict["behavior"]
                reason = _text(verdict.get("message")) or reason
                changed = verdict.get("updatedInput")
                if decision == "allow" and isinstance(changed, dict):
                    updated = changed
            permission_reason = _text(specific.get("permissionDecisionReason"))
            if permission_reason is not None:
                reason = permission_reason
            additional = _text(specific.get("additionalContext"))
            candidate = specific.get("updatedInput")
            if isinstance(candidate, dict) and updated is None:
                updated = candidate
    return HookOutput(
        exit_code,
        out,
        err,
        decision=decision,
        reason=reason,
        continue_=cont if isinstance(cont, bool) else None,
        stop_reason=_text(document.get("stopReason")),
        system_message=_text(document.get("systemMessage")),
        hook_event_name=event_name,
        additional_context=additional,
        updated_input=updated,
        structured=True,
    )

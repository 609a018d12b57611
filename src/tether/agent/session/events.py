"""Session log records: the header, the event envelope, the event types and their JSON lines.

Owns: `SessionHeader` (line 1 of a session file), `SessionEvent` (every later line), the event type
names of spec §7.6, which types are surface events (they carry `"surface_op": "append"` and derive
model history) and which are durable (fsynced before `append` returns), and `SessionError`.
Does not own files, locks or repair (`log.py`, `store.py`, `repair.py`).

Line formats (one JSON object per line, UTF-8, snake_case keys):

    {"type": "session", "version": 0, "id", "created_at", "cwd"?, "parent_session"?, "origin"?,
     "delegation_depth"}
    {"type", "seq", "time", "data", "surface_op"?: "append", "source_event_seqs"?: [int],
     "ignorable"?: true}

`seq` is contiguous from 0; `time` is epoch milliseconds; `data` is lossless JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, cast

from ...core.errors import HarnessError
from ...core.json import FrozenDict, JsonValue, snapshot

__all__ = [
    "AGENT_INBOX_SPLICED",
    "APPROVAL_ASKED",
    "APPROVAL_DECIDED",
    "ASSISTANT_CHUNK",
    "ASSISTANT_MESSAGE",
    "CODE_DISPATCH",
    "CODE_DISPATCH_START",
    "DURABLE_TYPES",
    "FORMAT_VERSION",
    "HOOK_INVOKED",
    "HOOK_RESULT",
    "LLM_RETRY",
    "LLM_RETRY_STARTED",
    "REQUEST_CONTEXT",
    "REQUEST_HEADER",
    "SESSION_COMPACTION",
    "SESSION_END_SEED",
    "STEP_END",
    "STEP_START",
    "SUBAGENT_SPAWNED",
    "SURFACE_TYPES",
    "SYNCED_ON_APPEND",
    "TODO_WRITE",
    "TOOL_CALL",
    "TOOL_RESULT",
    "TURN_END",
    "TURN_START",
    "USER_MESSAGE",
    "SessionError",
    "SessionEvent",
    "SessionHeader",
    "SessionWriteFailed",
    "assistant_call_ids",
    "result_call_id",
]

FORMAT_VERSION: Final = 0

TURN_START: Final = "turn/start"  # {turn}
TURN_END: Final = "turn/end"  # {turn, reason: {kind, ...}}
STEP_START: Final = "step/start"  # {turn, step}
STEP_END: Final = "step/end"  # {turn, step}
USER_MESSAGE: Final = "user/message"  # the user message itself (surface)
ASSISTANT_CHUNK: Final = "assistant/chunk"  # {turn, step, chunk}
ASSISTANT_MESSAGE: Final = (
    "assistant/message"  # {turn, step, message, usage?, interrupted?} (surface)
)
TOOL_CALL: Final = "tool/call"  # {turn, step, call_id, name, arguments (raw string)}
# {turn, step, message, error?: {name, code}, meta?, changed_arguments?} (surface);
# `changed_arguments`: the JSON arguments the call went on with when an approver or a hook
# changed the model's (tool/call's `arguments` stays the model's raw string); absent: unchanged.
TOOL_RESULT: Final = "tool/result"
TODO_WRITE: Final = "todo/write"  # {todos}
# Code Mode's nested calls, children of the `run_code` call `parent_call_id`:
# {root_call_id, parent_call_id, sub_call_id, name, arguments}
CODE_DISPATCH_START: Final = "tool/code-dispatch-start"
# the same keys plus the result's durable form: {is_error, content, error?, meta?}
CODE_DISPATCH: Final = "tool/code-dispatch"
REQUEST_HEADER: Final = "request/header"  # {header: {config, system?, tools?}, reason}
REQUEST_CONTEXT: Final = "request/context"  # {provider, model, context_window?}
SESSION_END_SEED: Final = "session/end-seed"  # {}
# {into_session, trigger, tokens_before} | {from_session, trigger, tokens_before, focus?}:
SESSION_COMPACTION: Final = "session/compaction"
AGENT_INBOX_SPLICED: Final = "agent/inbox/spliced"
HOOK_INVOKED: Final = "hook/invoked"  # {turn, point, dialect, matcher?, handler_id}
# {turn, point, handler_id, decision, exit_code?, stderr_summary?, duration_ms}:
HOOK_RESULT: Final = "hook/result"
APPROVAL_ASKED: Final = "approval/asked"  # {turn?, call_id, tool_name, reason?, fingerprint, ...}
APPROVAL_DECIDED: Final = "approval/decided"  # {turn?, call_id, outcome, answered_by, fingerprint}
LLM_RETRY: Final = "llm/retry"
LLM_RETRY_STARTED: Final = "llm/retry-started"
# a `task` call started a child agent whose own log is `session_id` (its header names this one
# as `parent_session`): {turn, call_id, session_id, agent_type, background}
SUBAGENT_SPAWNED: Final = "subagent/spawned"

SURFACE_TYPES: Final = frozenset({USER_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT})
"""Events whose message is part of the model history (`surface_op` is mandatory on them)."""

DURABLE_TYPES: Final = frozenset(
    {TOOL_CALL, TOOL_RESULT, CODE_DISPATCH_START, CODE_DISPATCH, TURN_END}
)
"""Events that are durable (fsynced) before the step that depends on them: a call's start and
its result, a Code Mode sub-call's alike, and the end of a turn (the rule: `SessionLog`'s
module docstring). `SYNCED_ON_APPEND` of them are fsynced before `append` returns; a
`tool/call` and a `tool/result` are synced by the next durability point, one fsync for all."""

SYNCED_ON_APPEND: Final = frozenset({CODE_DISPATCH_START, CODE_DISPATCH, TURN_END})
"""The `DURABLE_TYPES` fsynced before `append` returns: a turn's end is reported right after
it, and a Code Mode sub-call starts right after its start is logged."""


class SessionError(HarnessError):
    """A session could not be created, opened, read or appended to; `code` says why.

    Codes: SESSION_NOT_FOUND, SESSION_EXISTS, SESSION_LOCKED, SESSION_CORRUPT, SESSION_VERSION,
    SESSION_UNREADABLE,
    SESSION_CLOSED, SESSION_WRITE_FAILED, SESSION_INVALID_EVENT, SESSION_DUPLICATE_RESULT,
    SESSION_INVALID_ID.
    """


class SessionWriteFailed(SessionError):
    """The file refused a write (`ENOSPC`, `EIO`, ...): code `SESSION_WRITE_FAILED`.

    The log is cut back to its last complete line and refuses further appends until
    `SessionLog.recover()` succeeds; what is on disk stays a valid prefix of the session.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, "SESSION_WRITE_FAILED")


@dataclass(frozen=True, slots=True)
class SessionHeader:
    """Line 1 of a session file. `cwd`, when set, is absolute."""

    id: str
    created_at: int  # epoch ms
    cwd: str | None = None
    parent_session: str | None = None
    origin: str | None = None
    delegation_depth: int = 0
    version: int = FORMAT_VERSION

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "type": "session",
            "version": self.version,
            "id": self.id,
            "created_at": self.created_at,
        }
        for key in ("cwd", "parent_session", "origin"):
            if (value := getattr(self, key)) is not None:
                out[key] = value
        out["delegation_depth"] = self.delegation_depth
        return out

    @classmethod
    def from_json(cls, value: object) -> SessionHeader:
        """Read a header line's object. Raises SessionError (CORRUPT, or VERSION if newer)."""
        if not isinstance(value, dict) or value.get("type") != "session":
            raise SessionError("the first line is not a session header", "SESSION_CORRUPT")
        version = value.get("version")
        if version != FORMAT_VERSION:
            raise SessionError(
                f"session format version {version!r} is not supported (this tether reads version"
                f" {FORMAT_VERSION}); it was written by a newer tether — upgrade",
                "SESSION_VERSION",
            )
        session_id, created = value.get("id"), value.get("created_at")
        if not isinstance(session_id, str) or not session_id or not _is_int(created):
            raise SessionError(
                "the session header needs a string id and created_at", "SESSION_CORRUPT"
            )
        depth = value.get("delegation_depth", 0)
        return cls(
            id=session_id,
            created_at=cast(int, created),
            cwd=_opt_str(value, "cwd"),
            parent_session=_opt_str(value, "parent_session"),
            origin=_opt_str(value, "origin"),
            delegation_depth=depth if _is_int(depth) else 0,
        )


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """One log record. `data` is deep-frozen lossless JSON."""

    type: str
    seq: int
    time: int  # epoch ms
    data: Mapping[str, JsonValue]
    source_event_seqs: tuple[int, ...] | None = None
    ignorable: bool = False

    @property
    def surface(self) -> bool:
        """Whether this event carries a history message (`surface_op: "append"`)."""
        return self.type in SURFACE_TYPES

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "type": self.type,
            "seq": self.seq,
            "time": self.time,
            "data": cast(JsonValue, self.data),
        }
        if self.type in SURFACE_TYPES:
            out["surface_op"] = "append"
        if self.source_event_seqs is not None:
            out["source_event_seqs"] = list(self.source_event_seqs)
        if self.ignorable:
            out["ignorable"] = True
        return out

    @classmethod
    def from_json(cls, value: object) -> SessionEvent:
        """Read an event line's object. Raises ValueError naming what is wrong."""
        if not isinstance(value, dict):
            raise ValueError("an event line must be a JSON object")
        kind, seq, when, data = (value.get(k) for k in ("type", "seq", "time", "data"))
        if not isinstance(kind, str) or not kind:
            raise ValueError("event type is missing")
        if not _is_int(seq) or not _is_int(when):
            raise ValueError(f'"{kind}" event needs integer seq and time')
        if not isinstance(data, dict):
            raise ValueError(f'"{kind}" event data must be an object')
        seqs = value.get("source_event_seqs")
        if seqs is not None and not (isinstance(seqs, list) and all(_is_int(s) for s in seqs)):
            raise ValueError(f'"{kind}" event source_event_seqs must be a list of integers')
        return cls(
            type=kind,
            seq=cast(int, seq),
            time=cast(int, when),
            data=cast(FrozenDict, snapshot(data)),
            source_event_seqs=None if seqs is None else tuple(cast(list[int], seqs)),
            ignorable=value.get("ignorable") is True,
        )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _opt_str(obj: Mapping[str, object], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def assistant_call_ids(data: Mapping[str, JsonValue]) -> list[str]:
    """The tool-call ids of an `assistant/message` event's message, in model order."""
    message = data.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    ids: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool-call":
            call_id = block.get("id")
            if isinstance(call_id, str):
                ids.append(call_id)
    return ids


def result_call_id(data: Mapping[str, JsonValue]) -> str | None:
    """The call id a `tool/result` event's message answers, if it names one."""
    message = data.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and content and isinstance(content[0], dict):
        call_id = content[0].get("call_id")
        if isinstance(call_id, str):
            return call_id
    return None

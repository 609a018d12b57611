"""The records that cross Temporal: the session workflow's input, its activities' inputs and
outputs, the log entries the projector writes, and a turn's result.

Owns their shape only. They are plain frozen dataclasses of JSON-able fields (Temporal's default
data converter encodes them as JSON), importable inside the workflow sandbox: nothing here
imports tether's runtime or temporalio.

Compatibility: a record crosses between code versions (a workflow scheduled by one worker, its
activity run by another; a history recorded by an older release, replayed by this one). So a
field is only ever added, with a default, and a field an older writer sent stays readable
(`LlmStepInput.history`, `SessionState.surface`); unknown fields are ignored by the converter.
What the workflow *sends* in a new shape is gated by a patch (`tether.temporal.versions`), so a
worker that cannot read it yet never receives it.

Sizes: nothing here is meant to be large. A value that can grow with the session (a tool
result, the request header, the conversation) travels as a `BlobRef` to the payload store
(`tether.temporal.blobs`); anything else that happens to exceed the store's threshold is moved
out of the history by Temporal's external storage (`tether.temporal.storage`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LLM_STEP",
    "SESSION_WORKFLOW",
    "TOOL_CALL",
    "TOOL_DISPATCH",
    "ApprovalAsk",
    "ApprovalDecision",
    "BlobRef",
    "Conversation",
    "LlmStepInput",
    "LlmStepOutput",
    "LogEntry",
    "LogPage",
    "PlannedCall",
    "SessionSpec",
    "SessionState",
    "ToolCallInput",
    "ToolCallOutput",
    "ToolDispatchInput",
    "TurnResult",
    "header_digest",
]

SESSION_WORKFLOW = "tether.session"
LLM_STEP = "tether.llm_step"
TOOL_CALL = "tether.tool_call"
TOOL_DISPATCH = "tether.tool_dispatch"


@dataclass(frozen=True)
class SessionSpec:
    """How a session workflow runs.

    `tool_task_queue` routes every tool call (the workspace's workers); `llm_task_queue` the
    model calls; None for either means the workflow's own task queue. `heartbeat_timeout_s`
    bounds how long a dead worker goes unnoticed; a tool's `start_to_close` is its `timeout_ms`
    plus `tool_grace_s` (a backstop: `TOOL_TIMEOUT` stays the timeout policy's), or
    `tool_backstop_s` for a tool without a budget. After `turns_per_run` turns, or when
    Temporal suggests it (the history grew large), the workflow continues as new between turns
    with this spec and `carried` set to the session so far (a new session leaves it None); also
    once the run's history holds `history_bytes_per_run` bytes or `history_events_per_run`
    events. A tool call no worker of `tool_task_queue` takes within `tool_schedule_to_start_s`
    is `TOOL_NOT_STARTED`; a model step no worker takes within `llm_schedule_to_start_s` ends
    the turn with `LLM_STEP_NOT_STARTED`.
    """

    session_id: str
    tool_task_queue: str | None = None
    llm_task_queue: str | None = None
    heartbeat_timeout_s: float = 10.0
    tool_grace_s: float = 60.0
    tool_backstop_s: float = 6 * 3600.0
    llm_start_to_close_s: float = 900.0
    llm_attempts: int = 3
    max_steps: int = 50
    max_parallel_tool_calls: int = 10
    system_prompt: str | None = None
    max_tokens: int | None = None
    turns_per_run: int = 50
    carried: SessionState | None = None
    tool_schedule_to_start_s: float = 60.0
    llm_schedule_to_start_s: float = 60.0
    history_bytes_per_run: int = 4 * 1024 * 1024
    history_events_per_run: int = 5_000


@dataclass(frozen=True)
class BlobRef:
    """A JSON value in the payload store, by content: the storage driver that holds it, the
    driver's claim (where), the SHA-256 of the stored bytes and their size."""

    driver: str
    claim: dict[str, str]
    sha256: str
    size: int


@dataclass(frozen=True)
class LogEntry:
    """One session-log event as the workflow decided it: `type` and `data` of `tether.agent.session`
    (a `tool/result` cites the `tool/call` of the same call id when projected).

    `refs` names the fields of `data` that live in the payload store instead (a big tool
    result's `message`, the request header): the event's data is `data` with each of them
    filled in from its `BlobRef` (`tether.temporal.blobs.resolve`). `at` is the workflow time
    it was produced (epoch ms; None in entries of older runs)."""

    type: str
    data: dict[str, Any]
    refs: dict[str, BlobRef] = field(default_factory=dict)
    at: int | None = None


@dataclass(frozen=True)
class Conversation:
    """What the model sees, by reference: the `segments` sealed in the payload store, in order
    (each holds entries, or the refs of older segments), then the `tail` of newer entries
    inline. The `llm_step` activity that reads it also seals a tail that grew too big, and
    returns the equivalent, smaller `Conversation` for the workflow to keep."""

    segments: list[BlobRef] = field(default_factory=list)
    tail: list[LogEntry] = field(default_factory=list)


@dataclass(frozen=True)
class SessionState:
    """What a session workflow carries when it continues as new (Temporal keeps each run's
    history bounded): the turn count, `log_base` (the session-log index of the new run's first
    entry; the entries before it belong to earlier runs of the same workflow id), the
    conversation the model sees (`surface`: the user, assistant and tool-result entries), the
    last request header and context, and contexts parked for the next step.

    A run whose conversation is by reference carries `conversation` and `header_sha256` (the
    header itself is in the log, not carried); an older run carried `surface` and `header`."""

    turn: int
    log_base: int
    surface: list[LogEntry] = field(default_factory=list)
    header: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    parked: list[dict[str, Any]] = field(default_factory=list)
    conversation: Conversation | None = None
    header_sha256: str | None = None


@dataclass(frozen=True)
class LogPage:
    """The `log_page` query's answer: this run's entries from the asked index on. `base` is
    the session-log index of the run's first entry; entries before it are asked of
    `previous_run_id` (the run this one continued), None in the first run. `complete` is False
    when more entries follow the page (ask again from where it ends)."""

    base: int
    previous_run_id: str | None
    entries: list[LogEntry]
    complete: bool = True


@dataclass(frozen=True)
class PlannedCall:
    """One tool call of an assistant message, with what the workflow needs to schedule it:
    its `execution_mode` and the tool's `timeout_ms` (None: no budget), both from the registry
    of the worker that ran the model step."""

    id: str
    name: str
    arguments: str
    mode: str
    timeout_ms: float | None = None


@dataclass(frozen=True)
class LlmStepInput:
    """One model call: the conversation by reference (`conversation`; an older workflow sent
    every entry inline in `history`), and the SHA-256 of the request header the workflow last
    recorded, so the header travels back only when it changed."""

    session_id: str
    turn: int
    step: int
    history: list[LogEntry] = field(default_factory=list)
    system_prompt: str | None = None
    max_tokens: int | None = None
    conversation: Conversation | None = None
    header_sha256: str | None = None


@dataclass(frozen=True)
class LlmStepOutput:
    """One model call. `message` is the assistant message's JSON (None when the call failed with
    nothing to keep); `interrupted` marks a partial message of an aborted stream; `error` is the
    turn-end error (`{message, code, status?}`) of a failed call; `header`/`context` are what
    `request/header` and `request/context` record; `retries` the `llm/retry` data.

    `header_sha256` is the header's digest; when it equals the input's, `header` is None (the
    workflow has it already); a big header is in the store (`header_ref`). `conversation`, when
    set, is the input's conversation with its tail sealed: the workflow keeps it instead."""

    message: dict[str, Any] | None
    finish: str
    calls: list[PlannedCall]
    header: dict[str, Any] | None
    context: dict[str, Any]
    usage: dict[str, Any] | None = None
    interrupted: bool = False
    aborted: bool = False
    error: dict[str, Any] | None = None
    retries: list[dict[str, Any]] = field(default_factory=list)
    header_sha256: str | None = None
    header_ref: BlobRef | None = None
    conversation: Conversation | None = None


@dataclass(frozen=True)
class ToolCallInput:
    """One call to run. `by_reference`: the workflow reads `ToolCallOutput.refs`, so a big
    result may come back by reference (an older workflow needs it whole)."""

    session_id: str
    turn: int
    step: int
    call_id: str
    name: str
    arguments: str
    by_reference: bool = False


@dataclass(frozen=True)
class ToolDispatchInput:
    """A call a human answered (`tool_dispatch`): the call, and the answer to its `Ask`, which
    holds only for arguments with this `fingerprint`."""

    call: ToolCallInput
    decision: ApprovalDecision
    fingerprint: str


@dataclass(frozen=True)
class ToolCallOutput:
    """One call's published result: `record` is the `tool/result` event data (turn, step,
    message, error?, meta?) — with the fields named in `refs` in the payload store when the
    record is big —, `contexts` the user messages it carries (JSON), `cancelled` whether the
    activity saw a Temporal cancel (it still returns the published result), `spilled` the
    worker-local file holding a result too big for the model's context (None when not spilled).

    Or, from `tool_call` only: `ask` — the call needs a human's approval and stopped before
    dispatch (its body never ran; `record` is empty); the workflow waits for the answer."""

    record: dict[str, Any]
    code: str | None
    concludes_turn: bool = False
    contexts: list[dict[str, Any]] = field(default_factory=list)
    cancelled: bool = False
    spilled: str | None = None
    worker: str = ""
    ask: ApprovalAsk | None = None
    refs: dict[str, BlobRef] = field(default_factory=dict)


@dataclass(frozen=True)
class TurnResult:
    """How a turn ended: `reason` is the `turn/end` reason, `text` the last answer, `log_size`
    the number of session-log entries (over all runs) through this turn's `turn/end`.

    `entries` are the turn's log entries as the workflow produced them, from its `turn/start`
    to its `turn/end` (session-log indexes `log_size - len(entries)` on): recorded in the
    history with the Update's result, they are the durable record of the turn — read back, never
    derived again. None in a result recorded before turns carried their entries."""

    turn: int
    reason: dict[str, Any]
    text: str
    log_size: int
    entries: list[LogEntry] | None = None


@dataclass(frozen=True)
class ApprovalAsk:
    """A tool call waiting for a human (the worker's approval service asked): what to show.
    `arguments` is the call's arguments as JSON text; `fingerprint` the approval service's
    `sha256:` of them (what an answer approves)."""

    call_id: str
    tool_name: str
    arguments: str
    reason: str | None
    fingerprint: str


@dataclass(frozen=True)
class ApprovalDecision:
    """A human's answer to an `ApprovalAsk`: `allow-once` or `reject`, a rejection optionally
    with a `reason` the model reads."""

    call_id: str
    answer: str
    reason: str | None = None


def header_digest(header: dict[str, Any]) -> str:
    """The SHA-256 of a request header's canonical JSON: what the workflow and the model step
    compare instead of sending the header every step."""
    text = json.dumps(header, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()

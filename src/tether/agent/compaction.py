"""Compaction: a long conversation summarised by the model into a new session that starts there.

Owns: how big the next request is estimated to be (`context_tokens`), when it no longer fits
(`needs_compaction`: over the model's context window minus a reserve), asking the model for the
summary (`summarise`) and the session hand-over (`compact`). The old session log is kept; both
logs record one `session/compaction` event that links them:

    old session  {"into_session": <new id>, "trigger": "manual" | "auto", "tokens_before": int}
    new session  {"from_session": <old id>, "trigger", "tokens_before", "focus"?: str}

and the new session's history starts with one user message carrying the summary, so a request
after compaction (or a resume of the new session) carries the summary, not the old messages.
The new session's header names the old one as `parent_session` with origin `compaction`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from ..core.signals import AbortSignal
from ..tools.results import user_message
from .llm import LlmRequest
from .llm.service import Llm
from .messages import AssistantMessage, Message, message_to_json, usage_from_json
from .session import SessionLog, SessionStore
from .session.events import ASSISTANT_MESSAGE, SESSION_COMPACTION
from .session.history import derive_messages

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "Compacted",
    "compact",
    "context_tokens",
    "estimate_tokens",
    "needs_compaction",
    "reserve_for",
    "summarise",
    "summary_message_text",
]

DEFAULT_CONTEXT_WINDOW: Final = 128_000
"""The window assumed when neither the user nor the model's table names one."""

_CHARS_PER_TOKEN: Final = 4

_INSTRUCTION: Final = (
    "Summarise this conversation so that it can continue in a fresh context without the "
    "earlier messages. Do not call tools. Include: the user's goals and constraints, what has "
    "been done (files read or changed, commands run and their results), decisions made, open "
    "problems and the exact next steps. Keep file paths, identifiers and error messages "
    "verbatim. Answer with the summary only."
)


@dataclass(frozen=True, slots=True)
class Compacted:
    """The new session and the summary it starts from."""

    session: SessionLog
    summary: str
    tokens_before: int


def estimate_tokens(messages: Sequence[Message], extra: str = "") -> int:
    """A coarse token count: the messages' JSON length (plus `extra`) over 4 characters."""
    size = sum(len(json.dumps(message_to_json(m), ensure_ascii=False)) for m in messages)
    return (size + len(extra)) // _CHARS_PER_TOKEN


def context_tokens(session: SessionLog, extra: str = "") -> int:
    """How many tokens the next request will carry: the last model response's reported input
    and output tokens plus an estimate of what came after it (system prompt and tool schemas
    included in the reported part), never less than the plain estimate of the messages."""
    events = session.events
    messages = session.messages()
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if event.type != ASSISTANT_MESSAGE or "usage" not in event.data:
            continue
        try:
            usage = usage_from_json(event.data["usage"])
        except ValueError:
            break
        later = derive_messages(events[index + 1 :])
        reported = usage.input_tokens + usage.output_tokens + estimate_tokens(later, extra)
        return max(reported, estimate_tokens(messages, extra))
    return estimate_tokens(messages, extra)


def reserve_for(window: int) -> int:
    """Tokens kept free for the answer: a fifth of the window, at most 20 000."""
    return min(window // 5, 20_000)


def needs_compaction(tokens: int, window: int) -> bool:
    """Whether a request of `tokens` would exceed `window` minus its reserve."""
    return tokens > window - reserve_for(window)


def summary_message_text(from_session: str, summary: str) -> str:
    """The first user message of a compacted session."""
    return (
        f"This conversation continues session {from_session}, which was compacted. "
        f"Summary of the conversation so far:\n\n{summary}"
    )


async def summarise(
    llm: Llm,
    messages: Sequence[Message],
    *,
    system: str | None,
    tools: Sequence[Mapping[str, object]],
    focus: str | None,
    signal: AbortSignal,
) -> str:
    """Ask the model for a summary of `messages` (with `focus`, when given, stressed).

    Raises `LlmError` when the model fails or `signal` aborts; ValueError when it answers with
    no text."""
    instruction = _INSTRUCTION
    if focus:
        instruction += f"\n\nFocus the summary on: {focus}"
    request = LlmRequest(
        messages=[*messages, user_message(instruction)],
        system=system,
        tools=tools,
        model=llm.model,
    )
    generation = await llm.generate(request, signal=signal)
    text = _text(generation.message).strip()
    if not text:
        raise ValueError("the model answered the compaction request with no summary text")
    return text


def _text(message: AssistantMessage) -> str:
    return message.text


def compact(
    store: SessionStore,
    old: SessionLog,
    summary: str,
    *,
    trigger: Literal["manual", "auto"],
    tokens_before: int,
    focus: str | None = None,
) -> Compacted:
    """Open the new session that starts from `summary` and link both logs (see the module
    note). The old session stays open; the caller closes it."""
    cwd = old.header.cwd
    new = store.create(cwd=cwd, parent_session=old.id, origin="compaction")
    data: dict[str, object] = {
        "from_session": old.id,
        "trigger": trigger,
        "tokens_before": tokens_before,
    }
    if focus:
        data["focus"] = focus
    new.append(SESSION_COMPACTION, data)
    new.user_message(user_message(summary_message_text(old.id, summary), {"kind": "compaction"}))
    old.append(
        SESSION_COMPACTION,
        {"into_session": new.id, "trigger": trigger, "tokens_before": tokens_before},
    )
    return Compacted(new, summary, tokens_before)

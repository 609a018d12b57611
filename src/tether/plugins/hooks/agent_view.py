"""What the hook bridge reads of an agent, without importing the agent layer (duck-typed).

Owns reading an agent loop's cwd, command environment, session id, whether it is a subagent,
the text of its last answer, and parking hook contexts into it as user messages with the source
`HOOK_CONTEXT_SOURCE`. Does not run hooks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from ...core.json import JsonValue
from ...tools.results import UserMessage, text_content, user_message
from .journal import session_of

__all__ = [
    "HOOK_CONTEXT_SOURCE",
    "agent_cwd",
    "agent_env",
    "context_message",
    "inject_contexts",
    "is_subagent",
    "last_assistant_text",
    "session_id_of",
    "text_of",
]

HOOK_CONTEXT_SOURCE: Final[Mapping[str, JsonValue]] = {
    "kind": "plugin",
    "plugin": "hooks-claude-code",
}


def text_of(blocks: Sequence[Mapping[str, JsonValue]]) -> str:
    return "".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )


def agent_cwd(agent: object | None) -> str | None:
    session = session_of(agent)
    cwd = getattr(getattr(session, "header", None), "cwd", None)
    if isinstance(cwd, str):
        return cwd
    settings_cwd = getattr(getattr(agent, "settings", None), "cwd", None)
    return None if settings_cwd is None else str(settings_cwd)


def agent_env(agent: object | None) -> dict[str, str | None] | None:
    """The agent's command environment overlay (`AgentLoop.env`), which its bash calls apply."""
    env = getattr(agent, "env", None)
    return env if isinstance(env, dict) else None


def is_subagent(agent: object) -> bool:
    """A child agent loop (it has a `parent`): Claude Code runs no session-level hooks for it."""
    return getattr(agent, "parent", None) is not None


def session_id_of(agent: object) -> str:
    session_id = getattr(session_of(agent), "id", None)
    return session_id if isinstance(session_id, str) else ""


def inject_contexts(agent: object, contexts: list[str]) -> None:
    inject_into = getattr(agent, "inject", None)
    if contexts and callable(inject_into):
        inject_into(context_message(contexts))


def context_message(contexts: list[str]) -> UserMessage:
    blocks = [block for text in contexts for block in text_content(text)]
    return user_message(blocks, HOOK_CONTEXT_SOURCE)


def last_assistant_text(agent: object | None) -> str:
    """The text of the last assistant message in the agent's session ("" when none)."""
    messages = getattr(session_of(agent), "messages", None)
    if not callable(messages):
        return ""
    try:
        found = messages()
    except Exception:
        return ""
    for message in reversed(list(found) if isinstance(found, Sequence) else []):
        if getattr(message, "role", None) == "assistant":
            text = getattr(message, "text", "")
            return text if isinstance(text, str) else ""
    return ""

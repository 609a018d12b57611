"""Durable hook events in the agent's session log (spec §5.2 "durable log events").

Owns finding a call's session without importing the agent layer — `exec.agent.session`, any
object with `append(type, data)` (and `open_turn`, the number of the turn in progress) — and the
two log-only events a bridge writes around each hook it runs, only inside an open turn:

    hook/invoked  {turn, point, dialect, matcher?, handler_id}
    hook/result   {turn, point, handler_id, decision, exit_code?, stderr_summary?, duration_ms}

`decision` is the hook's own decision, else `stop` for `continue: false`, else `cancelled` when
its call or turn was cancelled, `error` when it failed — an exit code other than 0 and 2, killed
by a signal or at its timeout, or not run at all (non-blocking, as in Claude Code; never `pass`)
— else `pass`. `exit_code` is omitted when the hook had none (killed, or not run);
`stderr_summary` is the trimmed stderr (omitted when empty) cut at `max_chars` with `…` appended
when longer. A session that refuses an append is logged at WARNING and otherwise ignored: hooks
keep running.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ...core.errors import error_message

if TYPE_CHECKING:
    from .output import HookOutput

__all__ = ["HookJournal", "SessionSink", "session_of", "stderr_summary"]

_log = logging.getLogger("tether.plugins.hooks")


@runtime_checkable
class SessionSink(Protocol):
    """What the hooks need of an agent's session log."""

    def append(self, type: str, data: Mapping[str, object]) -> object: ...


def session_of(agent: object | None) -> SessionSink | None:
    """`agent.session` when it can take appends, else None."""
    session = getattr(agent, "session", None)
    return session if isinstance(session, SessionSink) else None


def _open_turn(session: SessionSink) -> int | None:
    turn = getattr(session, "open_turn", None)
    return turn if isinstance(turn, int) and not isinstance(turn, bool) else None


def stderr_summary(stderr: str, max_chars: int = 500) -> str | None:
    """Trimmed stderr, None when empty, cut at `max_chars` + `…` when longer."""
    text = stderr.strip()
    if not text:
        return None
    return text if len(text) <= max_chars else text[:max_chars] + "…"


def _fallback_decision(output: HookOutput, cancelled: bool) -> str:
    if output.continue_ is False:
        return "stop"
    if cancelled:
        return "cancelled"
    return "pass" if output.exit_code == 0 else "error"


class HookJournal:
    """Writes one agent's hook events; a no-op without a session or outside a turn."""

    __slots__ = ("_dialect", "_max_chars", "_session")

    def __init__(self, agent: object | None, dialect: str, max_chars: int = 500) -> None:
        self._session = session_of(agent)
        self._dialect = dialect
        self._max_chars = max_chars

    def invoked(self, point: str, matcher: str | None, handler_id: str) -> None:
        data: dict[str, object] = {"point": point, "dialect": self._dialect}
        if matcher is not None:
            data["matcher"] = matcher
        data["handler_id"] = handler_id
        self._append("hook/invoked", data)

    def result(
        self,
        point: str,
        handler_id: str,
        output: HookOutput,
        duration_ms: float,
        *,
        cancelled: bool = False,
    ) -> None:
        decision = output.decision or _fallback_decision(output, cancelled)
        data: dict[str, object] = {"point": point, "handler_id": handler_id, "decision": decision}
        if output.exit_code is not None:
            data["exit_code"] = output.exit_code
        summary = stderr_summary(output.stderr, self._max_chars)
        if summary is not None:
            data["stderr_summary"] = summary
        data["duration_ms"] = round(duration_ms, 3)
        self._append("hook/result", data)

    def _append(self, type: str, data: dict[str, object]) -> None:
        session = self._session
        if session is None:
            return
        turn = _open_turn(session)
        if turn is None:
            return
        try:
            session.append(type, {"turn": turn, **data})
        except Exception as exc:
            _log.warning(
                'hooks: could not record "%s" in the session: %s', type, error_message(exc)
            )

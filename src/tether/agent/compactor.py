"""Compaction while an `Agent` runs: whether the next request fits, and the hand-over as events.

Owns `Compactor`: the context window an `Agent(context_window=...)` keeps to (it only shrinks:
a model that refuses a request as too long teaches it the real size), the test before a turn and
before each later step (`fits`), and one compaction (`run`): `agent/pre-compact` (the hooks'
PreCompact), `CompactionStarted`, the model's summary, the new linked session
(`tether.agent.compaction.compact`), then `CompactionFinished` and `agent/post-compact`
— or `CompactionFailed` when the model fails, answers with no summary, or the signal aborts (the
conversation then stays where it was). Does not own the summary request or the session links
(`tether.agent.compaction`, imported when a window is first tested: making a `Compactor` needs
none of it, issue 36), nor which session the agent continues in (`tether.agent.api`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

from ..core.errors import error_message
from ..core.signals import AbortSignal
from .events import AgentEvent, CompactionFailed, CompactionFinished, CompactionStarted
from .llm import LlmError
from .loop import AgentLoop, TurnOutcome, default_system_prompt
from .session import SessionLog, SessionStore

if TYPE_CHECKING:
    from .compaction import Compacted

__all__ = ["Compactor", "overflowed"]


def overflowed(outcome: TurnOutcome) -> bool:
    """Whether the turn ended because the model refused the request as too long for its
    context window (`CONTEXT_WINDOW_EXCEEDED`)."""
    error = outcome.reason.get("error")
    return isinstance(error, Mapping) and error.get("code") == "CONTEXT_WINDOW_EXCEEDED"


class Compactor:
    """See the module note. `window` None: only manual compaction."""

    def __init__(
        self,
        store: SessionStore,
        window: int | None,
        emit: Callable[[AgentEvent], None],
    ) -> None:
        self._store = store
        self._emit = emit
        self.window = window

    def fits(self, session: SessionLog, extra: str = "") -> bool:
        """Whether the next request over `session` (plus `extra` text) fits the window minus its
        reserve; always true without a window or with nothing to compact."""
        if self.window is None or not session.messages():
            return True
        # the compaction machinery: imported when a window is first tested (issue 36)
        from .compaction import context_tokens, needs_compaction

        return not needs_compaction(context_tokens(session, extra), self.window)

    def learn_overflow(self, session: SessionLog) -> None:
        """The model refused the conversation in `session` as too long: the window is at most
        its size."""
        from .compaction import context_tokens  # at the first overflow (issue 36)

        tokens = context_tokens(session)
        self.window = tokens if self.window is None else min(self.window, tokens)

    async def run(
        self,
        loop: AgentLoop,
        *,
        trigger: Literal["manual", "auto"],
        signal: AbortSignal,
        focus: str | None = None,
        extra: str = "",
        overflow: bool = False,
    ) -> Compacted | None:
        """Summarise `loop`'s conversation into a new session (see the module note); None when
        there is nothing to summarise or it failed. The old session stays open."""
        from .compaction import compact, context_tokens, summarise  # at the first one (issue 36)

        session = loop.session
        messages = session.messages()
        if not messages:
            return None
        tokens = context_tokens(session, extra)
        await loop.compacting(trigger, focus, signal=signal)
        self._emit(CompactionStarted(trigger, tokens, self.window, overflow))
        settings = loop.settings
        try:
            summary = await summarise(
                loop.llm,
                messages,
                system=settings.system_prompt or default_system_prompt(settings.cwd),
                tools=loop.offered_tools(),
                focus=focus,
                signal=signal,
            )
        except (LlmError, ValueError) as exc:
            self._emit(CompactionFailed(error_message(exc)))
            return None
        done = compact(
            self._store, session, summary, trigger=trigger, tokens_before=tokens, focus=focus
        )
        self._emit(CompactionFinished(session.id, done.session.id, len(summary.split())))
        await loop.compacted(trigger, summary, signal=signal)
        return done

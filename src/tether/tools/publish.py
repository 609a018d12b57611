"""A call's last step (spec §1.14): its one `tools/result`, frozen and published exactly once.

Owns `publish` (`Pipeline.finish`): materialize the result, run the tool's `finalize_content`
once, move the call to `PUBLISHED`, hand the result to every `tools/result` observer. Publication
cannot be interrupted: a `BaseException` from `finalize_content` becomes the result's failure and
one from an observer is held until every observer has seen the result; either is raised once the
call is published. A second publication of one call is a `RuntimeError`.

Does not own which result a call reaches (`tools.pipeline`, `tools.precedence`) or how a result
is built (`tools.results`, `tools.outcomes`).
"""

from __future__ import annotations

import inspect
import logging
from typing import Final

from ..core.errors import error_message
from .execution import PUBLISHED, Call
from .outcomes import materialize, with_content
from .results import ToolExecutionResult, ToolSuccess, failure_from

__all__ = ["publish"]

_log = logging.getLogger("tether.tools")

_RESULT: Final = "tools/result"


def publish(call: Call, result: ToolExecutionResult) -> ToolExecutionResult:
    """Spec §1.14, synchronous and exactly once: freeze, finalize content, publish.

    Publication cannot be interrupted: a `BaseException` from `finalize_content` makes the
    result that exception's failure, one from an observer is held until every observer has
    seen the result; either is raised once the call is published (as a body's is)."""
    if call.stage is PUBLISHED:
        raise RuntimeError(f'tool "{call.name}" ({call.call_id}): result already published')
    if type(result) is ToolSuccess and result._owner is call.token:
        final: ToolExecutionResult = result  # canonical: frozen when it was built
    else:
        try:
            final = materialize(result)
        except Exception as exc:
            final = materialize(failure_from(exc))
    finalizer = call.finalizer
    view = call.view
    fatal: BaseException | None = None
    if finalizer is not None:
        try:
            content = finalizer(view, final)
            if content is not None:
                final = with_content(final, content)
        except Exception as exc:
            final = materialize(failure_from(exc))
        except BaseException as exc:  # published as its failure, then raised
            final = materialize(failure_from(exc))
            fatal = exc
    call.stage = PUBLISHED
    call.outcome = final
    observers = call.listeners.get(_RESULT)
    if observers is not None:
        for observer in observers:
            try:
                returned = observer(view, final)
                if returned is not None and inspect.isawaitable(returned):
                    if inspect.iscoroutine(returned):
                        returned.close()
                    raise TypeError("observers are synchronous; it returned an awaitable")
            except BaseException as exc:  # the next observers still see the result
                fatal = _observer_failed(call, exc, fatal)
    if fatal is not None:
        raise fatal
    return final


def _observer_failed(
    call: Call, exc: BaseException, fatal: BaseException | None
) -> BaseException | None:
    """An observer raised: an `Exception` is logged; the first `BaseException` is kept, to be
    raised once every observer has seen the result. Returns what is kept."""
    if not isinstance(exc, Exception):
        return exc if fatal is None else fatal
    try:
        _log.warning(
            'tool "%s" (%s): tools/result observer failed: %s',
            call.name,
            call.call_id,
            error_message(exc),
        )
    except Exception:  # e.g. no stack left to log with: the observers still come first
        pass
    return fatal

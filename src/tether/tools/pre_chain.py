"""The `tools/pre-execute` chain of one call, and how a listener changes the call's input.

Owns `PreChain`: the waterfall's queue whose `next` is `PreExecuteNext` — `next()` asks the rest
of the chain, `next(arguments=...)` first makes the changed arguments the call's (a PreToolUse
hook's `updatedInput`), snapshotted as the model's are, so every later listener, the approval,
the guards, the tool's validation and the body see them. Its base allows. Does not own the
decisions' handling (`tether.tools.pipeline`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from types import CoroutineType

from ..core.json import NotLosslessJson, snapshot
from ..kernel.events import Listener
from .decisions import MISSING, Allow
from .execution import Call

__all__ = ["PreChain"]

_ALLOW = Allow()


async def _allow() -> Allow:
    return _ALLOW


async def _resolved(value: object) -> object:
    return value


class PreChain:
    """One call's `tools/pre-execute` waterfall (`events.waterfall`'s queue, and its `next`):
    `next(arguments=...)` makes the changed arguments the call's (snapshotted as the model's
    are) before the rest of the chain sees the call. A class, not a closure: a closure that
    passes itself on is a reference cycle (`tether.kernel.events`)."""

    __slots__ = ("_call", "_listeners", "_position")

    def __init__(self, listeners: tuple[Listener, ...], call: Call) -> None:
        self._listeners = listeners
        self._call = call
        self._position = 0

    def __call__(self, *, arguments: object = MISSING) -> Awaitable[object]:
        call = self._call
        if arguments is not MISSING:
            try:
                call.arguments = snapshot(arguments)
            except NotLosslessJson:
                raise TypeError(
                    "changed tool execution arguments must be losslessly JSON-serializable"
                ) from None
        position = self._position
        if position == len(self._listeners):
            return _allow()
        self._position = position + 1
        result = self._listeners[position](call.view, self)
        if type(result) is CoroutineType or inspect.isawaitable(result):
            return result
        return _resolved(result)

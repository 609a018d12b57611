"""The `tools/pre-execute` chain of one call, and how a listener changes the call's input.

Owns `PreChain` (started by `start_pre_chain`): the waterfall's queue whose bound `next` is each
listener's `PreExecuteNext` — `next()` asks the rest of the chain, `next(arguments=...)` first
makes the changed arguments the call's (a PreToolUse hook's `updatedInput`), snapshotted as the
model's are, so every later listener, the approval, the guards, the tool's validation and the
body see them. Its base allows. Does not own the decisions' handling (`tether.tools.pipeline`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from types import CoroutineType
from typing import Final

from ..core.json import NotLosslessJson, snapshot
from ..kernel.events import Listener
from .decisions import MISSING, Allow
from .execution import Call

__all__ = ["PreChain", "start_pre_chain"]

_ALLOW = Allow()


async def _allow() -> Allow:
    return _ALLOW


async def _resolved(value: object) -> object:
    return value


class PreChain:
    """One call's `tools/pre-execute` waterfall (`events.waterfall`'s queue): its bound `next`
    is each listener's `call_next`; `next(arguments=...)` makes the changed arguments the call's
    (snapshotted as the model's are) before the rest of the chain sees the call. A class, not a
    closure: a closure that passes itself on is a reference cycle (`tether.kernel.events`). Its
    `next` is a bound method, not the instance's `__call__`: a listener's `await call_next()`
    then runs in the caller's interpreter frame loop (an instance's `__call__` goes through the
    type's call slot, a C-level call of its own on every `next()`). Made by `start_pre_chain`."""

    __slots__ = ("_call", "_listeners", "_position")

    _listeners: tuple[Listener, ...]
    _call: Call
    _position: int

    def next(self, *, arguments: object = MISSING) -> Awaitable[object]:
        """The rest of the chain (its base allows); with `arguments`, the call's new input."""
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
        result = self._listeners[position](call.view, self.next)
        if type(result) is CoroutineType or inspect.isawaitable(result):
            return result
        return _resolved(result)


_new: Final = object.__new__


def start_pre_chain(listeners: tuple[Listener, ...], call: Call) -> Awaitable[object]:
    """Run the first of `listeners` (at least one) with the chain's `next`: what it returned,
    as an awaitable. Plain slot stores on a fresh object, no `__init__` call."""
    chain: PreChain = _new(PreChain)
    chain._listeners = listeners
    chain._call = call
    chain._position = 1
    result = listeners[0](call.view, chain.next)
    if type(result) is CoroutineType or inspect.isawaitable(result):
        return result
    return _resolved(result)

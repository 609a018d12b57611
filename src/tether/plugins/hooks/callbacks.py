"""Hooks that are callbacks in another process: the Claude Agent SDK's `hooks=` (issue 35).

Owns `HookChannel` (what sends one `hook_callback` and returns the callback's JSON answer),
`callback_hook_set` (the `initialize` request's `hooks` — per event, `[{"matcher",
"hookCallbackIds", "timeout"?}]` — as a `ClaudeHookSet` whose hooks name callback ids) and
`callback_runner`, which runs such a hook in place of a command: the payload goes over the
channel, and the answer is decoded as a command hook's JSON stdout with exit code 0, so a
callback's decision is applied exactly as a command hook's (`permissionDecision: deny`,
`decision: block`, `continue: false`, `additionalContext`, …). A callback that fails or times
out is a non-blocking hook failure, as a command hook that exits 1 is. Does not own the channel
itself (`tether.cli.stream_input`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol

from ...core.errors import error_message
from ...core.signals import AbortSignal
from .claude_config import SUPPORTED_EVENTS, ClaudeHookSet, CommandHook, HookGroup
from .output import HookOutput, parse_hook_output
from .runner import DEFAULT_HOOK_TIMEOUT_MS, HookRun

__all__ = ["HookChannel", "HookRunner", "callback_hook_set", "callback_runner"]

HookRunner = Callable[..., Awaitable[HookRun]]
"""`run_hook`'s signature: `(shell, hook, payload, *, signal, …) -> HookRun`."""


class HookChannel(Protocol):
    """Sends one hook callback and returns its answer; raises when it failed."""

    async def hook_callback(
        self,
        callback_id: str,
        payload: Mapping[str, object],
        tool_use_id: str | None,
        *,
        timeout_ms: float,
        signal: AbortSignal,
    ) -> Mapping[str, object]: ...


def callback_hook_set(hooks: Mapping[str, object], source: str) -> ClaudeHookSet:
    """The `initialize` request's `hooks` as a hook set; ValueError names what is wrong."""
    hook_set = ClaudeHookSet()
    groups: list[HookGroup] = []
    for event, matchers in hooks.items():
        if event not in SUPPORTED_EVENTS:
            raise ValueError(f"hook event {event!r} is not one tether fires")
        if not isinstance(matchers, list):
            raise ValueError(f"the hooks of {event} are not a list")
        for entry in matchers:
            if not isinstance(entry, Mapping):
                raise ValueError(f"a matcher of {event} is not an object")
            matcher = entry.get("matcher")
            ids = entry.get("hookCallbackIds")
            timeout = entry.get("timeout")
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise ValueError(f"a matcher of {event} has no hookCallbackIds list")
            seconds = float(timeout) if isinstance(timeout, int | float) else None
            groups.append(
                HookGroup(
                    event,
                    matcher if isinstance(matcher, str) and matcher else None,
                    tuple(CommandHook(str(i), seconds) for i in ids),
                )
            )
    hook_set.add(source, groups)
    return hook_set


def callback_runner(channel: HookChannel) -> HookRunner:
    """A `run_hook` for hooks whose `command` is a callback id (see the module note)."""

    async def run(
        shell: object,
        hook: CommandHook,
        payload: Mapping[str, object],
        *,
        signal: AbortSignal,
        default_timeout_ms: float = DEFAULT_HOOK_TIMEOUT_MS,
        expected_event_name: str | None = None,
        **_: object,
    ) -> HookRun:
        started = time.monotonic()
        tool_use_id = payload.get("tool_use_id")
        try:
            answer = await channel.hook_callback(
                hook.command,
                payload,
                tool_use_id if isinstance(tool_use_id, str) else None,
                timeout_ms=hook.timeout_ms(default_timeout_ms),
                signal=signal,
            )
        except Exception as exc:
            output = HookOutput(None, "", f"hook callback failed: {error_message(exc)}")
            return HookRun(output, (time.monotonic() - started) * 1000, aborted=signal.aborted)
        output = parse_hook_output(0, json.dumps(dict(answer)), "", expected_event_name)
        return HookRun(output, (time.monotonic() - started) * 1000)

    return run

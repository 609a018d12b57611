"""Running one command hook through `ctx.shell` (spec §5.2 runner).

Owns `HookRun` and `run_hook`, which runs a `CommandHook` (parsed by `claude_config`, re-exported
here, its former home). A hook is a `bash -c` command run by the shell seam, so it gets what
every bash command gets: the scrubbed environment, its own process group, and SIGTERM → grace →
SIGKILL of that group when its timeout expires or when the caller's `signal` aborts. The signal
is required: the caller owns the lifetime (a tool call's signal, a turn's signal).

stdin is `json.dumps(payload)` plus a newline (`trailing_newline`, Claude Code: yes). The timeout
is the hook's `timeout * 1000` ms when set, else `default_timeout_ms`
(`DEFAULT_HOOK_TIMEOUT_MS`, 10 minutes); the shell caps it at its own `max_timeout_ms`.

`run_hook` never raises for the hook's own failures: a hook killed at its timeout, by the
signal, or by a signal from elsewhere (`killed_by`, e.g. `SIGKILL`) has exit code None
(non-blocking) and a note on stderr saying which; an executor failure (no bash, a
missing workdir, a signal that had already aborted) is an outcome with exit code None and the
error message as stderr. Only the cancellation of the awaiting task propagates (after the shell
has stopped the process group).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from ...core.errors import error_message
from ...core.signals import AbortSignal
from ...core.timeout import format_ms
from ..sandbox.policy import FULL_ACCESS, SandboxPolicy
from .claude_config import CommandHook
from .output import HookOutput, parse_hook_output

if TYPE_CHECKING:
    from ..shell.seam import ShellRequest, ShellRunResult

__all__ = ["DEFAULT_HOOK_TIMEOUT_MS", "CommandHook", "HookRun", "HookShell", "run_hook"]

DEFAULT_HOOK_TIMEOUT_MS: Final = 600_000
"""A hook's timeout when it sets none: 10 minutes."""


@dataclass(frozen=True, slots=True)
class HookRun:
    """One finished run: the decoded output and how long it took (wall time)."""

    output: HookOutput
    duration_ms: float
    timed_out: bool = False
    aborted: bool = False
    killed_by: str | None = None
    """The signal that ended the hook when neither its timeout nor its caller did."""


class HookShell(Protocol):
    """The part of `ctx.shell` a hook needs."""

    async def run(self, request: ShellRequest, *, signal: AbortSignal) -> ShellRunResult: ...


async def run_hook(
    shell: HookShell,
    hook: CommandHook,
    payload: Mapping[str, object],
    *,
    signal: AbortSignal,
    cwd: str | None = None,
    env: Mapping[str, str | None] | None = None,
    default_timeout_ms: float = DEFAULT_HOOK_TIMEOUT_MS,
    trailing_newline: bool = True,
    expected_event_name: str | None = None,
    now: Callable[[], float] = time.monotonic,
    sandbox: SandboxPolicy = FULL_ACCESS,
) -> HookRun:
    """Run `hook` with `payload` on stdin and decode what it said (see the module note)."""
    from ..shell.seam import ShellRequest  # the shell's request: at the first hook run (issue 36)

    started = now()
    stdin = json.dumps(payload) + ("\n" if trailing_newline else "")
    timeout_ms = hook.timeout_ms(default_timeout_ms)
    try:
        result = await shell.run(
            ShellRequest(
                command=hook.command,
                workdir=cwd,
                timeout_ms=timeout_ms,
                stdin=stdin,
                env={} if env is None else env,
                sandbox=sandbox,
            ),
            signal=signal,
        )
    except Exception as exc:
        output = HookOutput(None, "", error_message(exc))
        return HookRun(output, (now() - started) * 1000, aborted=signal.aborted)
    stderr = result.stderr.text
    exit_code = result.exit_code
    killed_by = None
    if result.timed_out or result.aborted:
        exit_code = None  # killed by us: never a decision, whatever the shell reported
        why = f"timed out after {format_ms(result.timeout_ms)}ms" if result.timed_out else None
        stderr = _noted(stderr, f"hook {why or 'cancelled'}; its process group was killed")
    elif exit_code is None:
        killed_by = result.signal_name or "a signal"
        stderr = _noted(stderr, f"hook killed by {killed_by}")
    output = parse_hook_output(exit_code, result.stdout.text, stderr, expected_event_name)
    return HookRun(output, (now() - started) * 1000, result.timed_out, result.aborted, killed_by)


def _noted(stderr: str, note: str) -> str:
    return f"{stderr.rstrip()}\n{note}" if stderr.strip() else note

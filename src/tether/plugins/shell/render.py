"""What the model sees of a bash result (exact texts, spec §3.6 "Render").

Owns: the foreground rendering (stdout, `[stderr]` and stderr, truncation notices with the spill
path, `(no output)`, then the markers `[timed out after <ms>ms]`, `[killed by signal: <SIG>]` or
`[exit code: <n>]`, each on its own line), the background-read rendering used by `job_output`
(the delta plus a lost-output notice), and `parse_exit_status`, its inverse for presenters.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired

from typing_extensions import TypedDict

from ...core.timeout import format_ms

if TYPE_CHECKING:  # the records: imported by the first command (issue 36)
    from .records import Collected, OutputDelta

__all__ = [
    "ExitMarker",
    "StreamValue",
    "parse_exit_status",
    "render_background_read",
    "render_foreground",
    "render_stream",
    "stream_value",
]


class StreamValue(TypedDict):
    """One collected stream in the tool's value."""

    text: str
    truncated: bool
    spill_path: NotRequired[str]


def stream_value(collected: Collected) -> StreamValue:
    """A collected stream as the tool's value holds it."""
    value: StreamValue = {"text": collected.text, "truncated": collected.truncated}
    if collected.spill_path is not None:
        value["spill_path"] = collected.spill_path
    return value


def render_stream(stream: StreamValue) -> str:
    """The text, plus `\\n[output truncated; full output: <path or (unavailable)>]` if cut."""
    if not stream["truncated"]:
        return stream["text"]
    where = stream.get("spill_path") or "(unavailable)"
    return f"{stream['text']}\n[output truncated; full output: {where}]"


def render_foreground(
    stdout: StreamValue,
    stderr: StreamValue,
    *,
    exit_code: int | None,
    signal_name: str | None,
    timed_out: bool,
    timeout_ms: float,
    note: str | None = None,
) -> str:
    """`echo failing; exit 3` ⇒ `failing\\n[exit code: 3]`; `sleep 60` with timeout 100 ⇒
    `(no output)\\n[timed out after 100ms]\\n[killed by signal: SIGTERM]`; a clean exit adds
    nothing. A `note` (the sandbox's, `tether.plugins.sandbox.denials`) is a `[<note>]` line
    before the markers."""
    body = render_stream(stdout)
    err = render_stream(stderr)
    if err:
        if body and not body.endswith("\n"):
            body += "\n"
        body += f"[stderr]\n{err}"
    if not body:
        body = "(no output)"
    markers = [] if note is None else [f"[{note}]"]
    if timed_out:
        markers.append(f"[timed out after {format_ms(timeout_ms)}ms]")
    if signal_name is not None:
        markers.append(f"[killed by signal: {signal_name}]")
    elif exit_code:
        markers.append(f"[exit code: {exit_code}]")
    if not markers:
        return body
    if not body.endswith("\n"):
        body += "\n"
    return body + "\n".join(markers)


def render_background_read(read: OutputDelta) -> str:
    """A background read: the delta, then (on its own line) a notice when output was lost
    from memory: `[some output was dropped from memory; full output: <paths or (unavailable)>]`."""
    text = read.delta
    if not read.lossy:
        return text
    paths = [p for p in (read.stdout_spill_path, read.stderr_spill_path) if p]
    notice = (
        "[some output was dropped from memory; full output: "
        f"{', '.join(paths) if paths else '(unavailable)'}]"
    )
    if text and not text.endswith("\n"):
        text += "\n"
    return text + notice


@dataclass(frozen=True, slots=True)
class ExitMarker:
    """A rendering split into its body and exit facts."""

    body: str
    exit_code: int | None
    signal_name: str | None


@functools.cache
def _signal() -> re.Pattern[str]:
    return re.compile(r"\n\[killed by signal: ([^\]\n]+)\]\Z")


@functools.cache
def _exit() -> re.Pattern[str]:
    return re.compile(r"\n\[exit code: (-?\d+)\]\Z")


def parse_exit_status(text: str) -> ExitMarker:
    """Read the final marker back: `[killed by signal: X]`, else `[exit code: N]`, else exit 0.
    A marker needs its leading newline and must end the text."""
    match = _signal().search(text)
    if match:
        return ExitMarker(text[: match.start()], None, match.group(1))
    match = _exit().search(text)
    if match:
        return ExitMarker(text[: match.start()], int(match.group(1)), None)
    return ExitMarker(text, 0, None)

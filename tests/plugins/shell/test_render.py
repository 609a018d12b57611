"""Contract of what the model sees of bash results (spec §3.6 "Render"), as pure functions.

- Foreground: body = stdout (+ truncation notice), then `[stderr]` and stderr on a new line;
  `(no output)` when empty; markers on their own lines: timeout first, then the signal or a
  nonzero exit code; no trailing newline after markers; a clean exit adds nothing.
- Background reads: the delta, plus a notice when output was dropped from memory.
- `parse_exit_status` reads the final marker back only when it ends the text after a newline.
"""

from __future__ import annotations

from tether.plugins.shell import OutputDelta
from tether.plugins.shell.render import (
    ExitMarker,
    StreamValue,
    parse_exit_status,
    render_background_read,
    render_foreground,
)

EMPTY: StreamValue = {"text": "", "truncated": False}


def out(text: str, truncated: bool = False, spill: str | None = None) -> StreamValue:
    value: StreamValue = {"text": text, "truncated": truncated}
    if spill is not None:
        value["spill_path"] = spill
    return value


def render(stdout: StreamValue, stderr: StreamValue = EMPTY, **facts: object) -> str:
    defaults: dict[str, object] = {
        "exit_code": 0,
        "signal_name": None,
        "timed_out": False,
        "timeout_ms": 1000,
    }
    return render_foreground(stdout, stderr, **{**defaults, **facts})  # type: ignore[arg-type]


def test_stderr_gets_its_own_line_after_stdout_without_a_newline() -> None:
    assert render(out("a"), out("b")) == "a\n[stderr]\nb"


def test_only_stderr_still_gets_its_marker() -> None:
    assert render(EMPTY, out("oops\n"), exit_code=1) == "[stderr]\noops\n[exit code: 1]"


def test_truncated_streams_name_their_spill_file_or_say_it_is_unavailable() -> None:
    assert render(out("tail", True, "/tmp/s.log")) == (
        "tail\n[output truncated; full output: /tmp/s.log]"
    )
    assert render(EMPTY, out("e", True)) == (
        "[stderr]\ne\n[output truncated; full output: (unavailable)]"
    )


def test_a_timeout_marker_comes_before_the_signal_marker() -> None:
    rendered = render(out("partial"), exit_code=None, signal_name="SIGKILL", timed_out=True)

    assert rendered == "partial\n[timed out after 1000ms]\n[killed by signal: SIGKILL]"


def test_a_background_read_notes_output_dropped_from_memory() -> None:
    lossy = OutputDelta("tail", True, "/tmp/out.log", "/tmp/err.log")

    assert render_background_read(lossy) == (
        "tail\n[some output was dropped from memory; full output: /tmp/out.log, /tmp/err.log]"
    )
    assert render_background_read(OutputDelta("", True)) == (
        "[some output was dropped from memory; full output: (unavailable)]"
    )
    assert render_background_read(OutputDelta("fine\n", False)) == "fine\n"


def test_parse_exit_status_reads_the_final_marker_back() -> None:
    assert parse_exit_status("x\n[killed by signal: SIGTERM]") == ExitMarker("x", None, "SIGTERM")
    assert parse_exit_status("x\n[exit code: 3]") == ExitMarker("x", 3, None)
    assert parse_exit_status("[exit code: 3]") == ExitMarker("[exit code: 3]", 0, None)
    assert parse_exit_status("x\n[exit code: 3]\n") == ExitMarker("x\n[exit code: 3]\n", 0, None)

"""The `tether` command: parses arguments and runs one command to an exit code.

Owns: the command tree (`COMMANDS`), exit codes, and how text reaches stdout/stderr: a character
the stream cannot encode (a lone surrogate in a tool result, say) is written as a backslash
escape instead of raising mid-print and losing the result; and, in the console script only, the
cyclic collector's young generation (50,000 allocations, not 700: start-up makes few cycles).
Each command lives in `tether.cli.commands` and is registered by import path, so a run imports
only the command it runs — not the agent loop, the model client or the plugins for
`tether tools list`, nothing of them for `--help`.
A few flags route a command to another implementation (`ROUTES`: `tether run --temporal ADDRESS`
runs the turn as a durable session on Temporal), decided from the arguments before parsing.
`tether`, `tether --help` / `-h` and `tether --version` / `-V` are answered from the table below
without importing cyclopts or rich at all (issue 12 §3: help in well under 0.2 s;
`bench/startup.py`, tests/cli/test_startup.py).
`run`, `chat` and Claude Code's root forms — `tether "prompt"` (a chat that starts with it) and
`tether -p "prompt"` (`run`), any first argument that is not a command — are parsed with
`argparse` (`tether.cli.agent_flags`, `AGENT_COMMANDS`); `tether tools list` with at most
`--config`/`--cwd` and a well-formed `tether tools call NAME [ARGUMENTS] [options]` run without
cyclopts (`tether.cli.commands.tools_list`, `tether.cli.commands.tools_call`: any other form of
them, `--help` or a usage error, is cyclopts'); the other commands and forms with cyclopts.
"""

from __future__ import annotations

import atexit
import io
import os
import sys

from .version import version_text

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the quick paths import nothing they need not
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import Final, Literal

    import cyclopts

    from .commands.tools_call import CallRequest

    app: cyclopts.App  # built on first use by `__getattr__`

__all__ = ["AGENT_COMMANDS", "COMMANDS", "HELP", "ROUTES", "app", "main", "run", "version_text"]

HELP: Final = "tether: an agent harness whose tool runtime gets cancellation right."

_RUN_HELP: Final = (
    "Answer one task, print the final answer, and exit (0 iff the turn completed).\n\n"
    "Nobody is asked: a call the permission rules would ask about is refused (the model is "
    "told why and may try something else) unless --allow or --yolo permits it. On a terminal "
    "the answer streams; piped, stdout gets only the answer and progress goes to stderr.\n\n"
    "With --temporal ADDRESS the turn runs as a durable session on Temporal "
    "(`tether run --temporal ADDRESS --help`; docs/temporal.md)."
)
_CHAT_HELP: Final = (
    "Talk to the agent. Esc or Ctrl-C aborts the running turn; Ctrl-C twice quits; /exit "
    "quits; --continue or --resume [ID] picks up an earlier session.\n\n"
    "Tool calls the permission rules ask about are shown with their arguments and wait for an "
    "answer: y (yes, once), a (yes, and don't ask again: saved to .claude/settings.local.json), "
    "s (yes, for this session) or n (no).\n\n"
    "With --temporal ADDRESS the session is a durable one on Temporal "
    "(`tether chat --temporal ADDRESS --help`; docs/temporal.md)."
)

COMMANDS: Final[tuple[tuple[str, str, str], ...]] = (
    ("chat", "tether.cli.commands.agent:chat", _CHAT_HELP),
    (
        "demo",
        "tether.cli.commands.demo:demo",
        "Run a real agent turn against a scripted local model (no network, no API key).",
    ),
    ("run", "tether.cli.commands.agent:run", _RUN_HELP),
    (
        "sessions",
        "tether.cli.commands.sessions:app",
        "List, inspect, verify and resume session logs.",
    ),
    ("tools", "tether.cli.commands.tools:app", "Inspect and call the registered tools."),
    ("mcp", "tether.cli.commands.mcp:app", "List MCP servers; serve tether's tools over MCP."),
    ("worker", "tether.cli.commands.temporal:worker", "Run a Temporal worker for tether sessions."),
    (
        "temporal",
        "tether.cli.commands.temporal:app",
        "Durable sessions on Temporal.",
    ),
)
"""(name, import path, help) of every command, in help order."""

ROUTES: Final[tuple[tuple[str, str, str], ...]] = (
    ("run", "--temporal", "tether.cli.commands.temporal:run_on_temporal"),
    ("chat", "--temporal", "tether.cli.commands.temporal:chat_on_temporal"),
)
"""(command, flag, import path): given the flag, the command runs the import path instead."""

AGENT_COMMANDS: Final = ("run", "chat")
"""The commands parsed by `tether.cli.agent_flags` (argparse), not cyclopts (unless routed)."""

_app: cyclopts.App | None = None


def _build(routed: dict[str, str] | None = None) -> cyclopts.App:
    import cyclopts

    built = cyclopts.App(
        name="tether",
        help=HELP,
        version=version_text(),
        version_flags=["--version", "-V"],
        help_format="plaintext",  # the markdown renderer (rich.markdown) costs ~100 ms to import
    )
    for name, path, text in COMMANDS:
        if routed is not None and name in routed:
            built.command(routed[name], name=name)  # its own docstring is its help
        else:
            built.command(path, name=name, help=text)
    return built


def _routed(args: Sequence[str]) -> dict[str, str] | None:
    """The `ROUTES` row the arguments select, as {command: import path}; None for none."""
    if not args:
        return None
    options = args[1 : args.index("--")] if "--" in args else args[1:]
    for name, flag, path in ROUTES:
        if args[0] == name and any(a == flag or a.startswith(flag + "=") for a in options):
            return {name: path}
    return None


def __getattr__(name: str) -> object:
    """`app`, the cyclopts application, built on first use."""
    global _app
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _app is None:
        _app = _build()
    return _app


def _quick_help() -> str:
    width = max(len("-V, --version"), *(len(name) for name, _, _ in COMMANDS)) + 2
    lines = [
        "Usage: tether COMMAND",
        '       tether [OPTIONS] ["PROMPT"]     (a chat; -p "PROMPT" answers and exits)',
        "",
        HELP,
        "",
        "Commands:",
    ]
    lines += [f"  {name:<{width}}{text.split(chr(10))[0]}" for name, _, text in COMMANDS]
    lines += [
        "",
        "Options (besides the chat's and run's: tether chat --help):",
        f"  {'-h, --help':<{width}}Display this message and exit.",
        f"  {'-V, --version':<{width}}Display the version and exit.",
        "",
        "Run `tether COMMAND --help` for a command's options.",
    ]
    return "\n".join(lines) + "\n"


def _quick(args: list[str]) -> int | None:
    """The exit code of an invocation answered without cyclopts, or None."""
    if args in ([], ["--help"], ["-h"]):
        sys.stdout.write(_quick_help())
        return 0
    if args in (["--version"], ["-V"]):
        sys.stdout.write(version_text() + "\n")
        return 0
    return None


def _escape_unencodable() -> None:
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code."""
    _escape_unencodable()
    args = list(sys.argv[1:] if argv is None else argv)
    quick = _quick(args)
    if quick is not None:
        return quick
    routed = _routed(args)
    names = {name for name, _, _ in COMMANDS}
    if routed is None and args[0] in AGENT_COMMANDS:
        command: Literal["run", "chat"] = "run" if args[0] == "run" else "chat"
        return _guarded(lambda: _agent_main(command, args[1:]))
    if routed is None and args[0] not in names:
        return _guarded(lambda: _agent_main("root", args))
    if args[:2] == ["tools", "list"]:
        from .commands.tools_list import quick_options

        options = quick_options(args[2:])
        if options is not None:  # no cyclopts on the common path (issue 36); else it parses
            return _guarded(lambda: _tools_list(options))
    if args[:2] == ["tools", "call"]:
        from .commands.tools_call import quick_request

        request = quick_request(args[2:])
        if request is not None:  # no cyclopts for a well-formed call (issue 36); else it parses
            return _guarded(lambda: _tools_call(request))
    import cyclopts

    application = __getattr__("app") if routed is None else _build(routed)
    assert isinstance(application, cyclopts.App)

    def call() -> int:
        try:
            result = application(
                args, exit_on_error=False, print_error=True, result_action="return_value"
            )
        except cyclopts.CycloptsError:
            return 2
        return result if isinstance(result, int) else 0

    return _guarded(call)


def _agent_main(command: Literal["run", "chat", "root"], argv: list[str]) -> int:
    """Parse first (argparse only: `--help` and a bad flag import nothing more), then run."""
    from .agent_flags import main_flags

    flags = main_flags(command, argv)
    if isinstance(flags, int):
        return flags
    with _FrozenImports():
        from .commands.agent import run_flags

    return run_flags(command, flags)


def _tools_list(options: dict[str, Path]) -> int:
    with _FrozenImports():
        import asyncio

        from .commands.tools_list import list_tools

    return asyncio.run(list_tools(**options))


def _tools_call(request: CallRequest) -> int:
    with _FrozenImports():
        import asyncio

        from .commands.tools_call import call_tool

    return asyncio.run(call_tool(request))


def _guarded(call: Callable[[], int]) -> int:
    """`call()`'s exit code, with how a command's end becomes one: SystemExit's code, 130 for
    Ctrl-C, 0 for a reader that left the pipe, 1 with one line for an unexpected error."""
    try:
        return call()
    except SystemExit as exit:
        code = exit.code
        return code if isinstance(code, int) else 0
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `tether ... | head`: the reader left; not an error worth a line
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:
        if os.environ.get("TETHER_DEBUG"):
            raise
        from ..core.errors import error_message

        sys.stderr.write(f"tether: {error_message(exc)} (TETHER_DEBUG=1 shows the traceback)\n")
        return 1


def run() -> None:
    """Console-script entry point: run the command, then end the process the one way every
    command ends (`_end_process`)."""
    _spare_the_collector()
    status = _Status()
    atexit.register(_end_process, status)  # the first handler registered: it runs last
    status.code = main()
    raise SystemExit(status.code)


_YOUNG_GENERATION: Final = 50_000
"""The cyclic collector's first threshold in the `tether` process (CPython's default: 700)."""


def _spare_the_collector() -> None:
    """Start-up builds ~600 modules' worth of long-lived objects (classes, functions, pydantic
    schemas) and almost no garbage, yet with CPython's default threshold the cyclic collector
    ran 212 times before the first model request, re-walking what start-up had built: 2% of the
    instructions to that request and, timed on a loaded machine, up to a fifth of its time
    (issue 36, bench/README).
    A young generation of 50,000 allocations still collects every cycle, a few MB later; only
    the console script sets it, a program that imports tether keeps its own."""
    import gc

    gc.set_threshold(_YOUNG_GENERATION, *gc.get_threshold()[1:])


class _FrozenImports:
    """Import a command's modules with the cyclic collector off, then freeze what they built.

    Imports build long-lived objects (modules, classes, functions) and next to no garbage, yet
    even a 50,000-allocation young generation filled up once while `run` imported its modules,
    and the collector walked all of them (~14 ms before the first request, issue 36). Frozen
    (`gc.freeze`, public API), they sit in the permanent generation: no later collection walks
    them again, and the young generation counts from zero. The collector is back on when the
    block ends, however it ends. (A class, not `contextlib`: `--help` imports nothing more.)"""

    def __enter__(self) -> None:
        import gc

        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        import gc

        gc.freeze()
        gc.enable()


class _Status:
    """The exit code `_end_process` ends with: 1 until `main` returned (an exception that escaped
    it is printed by Python and exits 1)."""

    code = 1


def _end_process(status: _Status) -> None:
    """End the process after Python's orderly shutdown but before interpreter finalization.

    By the time the last atexit handler runs, Python has joined the non-daemon threads and run
    every other exit handler (logging, temporary directories, `weakref.finalize`); what remains
    is tearing down the interpreter's objects. Native threads that outlive a command may enter
    Python at any moment: Monty's tokio workers (the sandbox runtime of Code Mode; pydantic-monty
    1.4 has no way to shut that runtime down) finish delivering a result to the event loop after
    the loop already ran it, temporalio's Rust core calls back into Python (temporalio/sdk-python
    #300). A thread that takes the GIL once finalization has begun is ended with
    `pthread_exit` on CPython 3.11-3.13, which unwinds through Rust frames and aborts the process
    (SIGABRT, rc 134; issue 23 §8). So the standard streams are flushed here and the process ends
    at once with the command's exit code; nothing a command owns is left to finalization (each
    closes what it opened before `main` returns)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status.code)

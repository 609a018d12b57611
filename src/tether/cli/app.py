"""The `tether` command: parses arguments (cyclopts) and runs one command to an exit code.

Owns: the command tree, exit codes, and how text reaches stdout/stderr: a character the
stream cannot encode (a lone surrogate in a tool result, say) is written as a backslash escape
instead of raising mid-print and losing the result. Each command lives in
`tether.cli.commands`.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence

import cyclopts

from ..core.errors import error_message
from .commands import agent as agent_commands
from .commands import demo as demo_commands
from .commands import sessions as sessions_commands
from .commands import temporal as temporal_commands
from .commands import tools as tools_commands

__all__ = ["app", "main", "run"]

app = cyclopts.App(
    name="tether",
    help="tether: an agent harness whose tool runtime gets cancellation right.",
    version_flags=["--version", "-V"],
)
app.command(agent_commands.run, name="run")
app.command(agent_commands.chat, name="chat")
app.command(demo_commands.demo, name="demo")
app.command(tools_commands.app, name="tools")
app.command(sessions_commands.app, name="sessions")
app.command(temporal_commands.worker, name="worker")
app.command(temporal_commands.app, name="temporal")


def _escape_unencodable() -> None:
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code."""
    _escape_unencodable()
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result = app(args, exit_on_error=False, print_error=True, result_action="return_value")
    except cyclopts.CycloptsError:
        return 2
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
        sys.stderr.write(f"tether: {error_message(exc)} (TETHER_DEBUG=1 shows the traceback)\n")
        return 1
    return result if isinstance(result, int) else 0


def run() -> None:
    """Console-script entry point."""
    raise SystemExit(main())

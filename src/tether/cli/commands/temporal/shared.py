"""What the `tether worker` and `tether temporal ...` commands share: the `temporal` sub-app,
the option types (`--output-format`, `--payload-store`, the cluster flags), the check that the
`temporal` extra is installed, and how a failure becomes one line and an exit code. Does not
own any command.
"""

from __future__ import annotations

import asyncio
import signal as os_signal
import sys
from typing import Annotated, Final, Literal

import cyclopts

from ....agent.session import SessionError
from ...temporal_cluster import ClusterFlags

__all__ = [
    "CLUSTER",
    "EXIT_NO_WORKER",
    "OutputFormatOpt",
    "PayloadStoreOpt",
    "app",
    "failed",
    "failure_code",
    "failure_kind",
    "have_temporalio",
    "notice",
    "on_stop_signals",
    "problems",
]

OutputFormatOpt = Annotated[
    Literal["text", "json", "stream-json"],
    cyclopts.Parameter(
        name="--output-format",
        help="text (the answer), json (one result object) or stream-json (one record per "
        "line), in Claude Code's schema; see docs/output-format.md.",
    ),
]

CLUSTER = ClusterFlags()

EXIT_NO_WORKER: Final = 75
"""`run --temporal` whose turn no worker took within `--worker-wait-s` (EX_TEMPFAIL: the session
is still there; start a worker and attach)."""

app = cyclopts.App(name="temporal", help="Durable sessions on Temporal (the `temporal` extra).")

MISSING = "the Temporal integration needs the extra: pip install 'tether[temporal]'"


def have_temporalio() -> bool:
    try:
        import temporalio  # noqa: F401
    except ImportError:
        sys.stderr.write(f"tether: {MISSING}\n")
        return False
    return True


PayloadStoreOpt = Annotated[
    str | None,
    cyclopts.Parameter(
        name="--payload-store",
        help="Where payloads too big for a Temporal history go: file:///DIR (one host) or "
        "s3://BUCKET (a cluster; AWS environment for credentials, region, endpoint). Default "
        "$TETHER_TEMPORAL_PAYLOAD_STORE, else $TETHER_HOME/temporal/payloads. Every worker "
        "and client of a namespace must use the same one.",
    ),
]


def on_stop_signals(event: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (os_signal.SIGINT, os_signal.SIGTERM):
        loop.add_signal_handler(sig, event.set)


def notice(text: str) -> None:
    sys.stderr.write(f"tether: {text}\n")
    sys.stderr.flush()


def problems() -> tuple[type[Exception], ...]:
    """What a Temporal command reports in one line instead of a traceback: a session that
    cannot be used, a bad setting, a store or a cluster that cannot be reached or refuses."""
    from temporalio.service import RPCError

    return (SessionError, ValueError, RuntimeError, ImportError, RPCError)


def failed(exc: BaseException) -> int:
    """The one line for a session that cannot be used, a store or a cluster that cannot be
    reached; the exit code."""
    notice(str(exc))
    return failure_code(exc)


def failure_code(exc: BaseException) -> int:
    return 2 if isinstance(exc, SessionError | ValueError) else 1


def failure_kind(exc: BaseException) -> str:
    """The code of a json `result` record for a run that could not start or follow its turn."""
    from ....temporal.connection import ClusterUnreachable

    if isinstance(exc, ClusterUnreachable):
        return "TEMPORAL_UNREACHABLE"
    if isinstance(exc, SessionError):
        return "SESSION_UNAVAILABLE"
    if isinstance(exc, ValueError):
        return "INVALID_CONFIG"
    return "TEMPORAL_ERROR"

"""`tether worker`, `tether run|chat --temporal ADDRESS` and `tether temporal
dev|run|chat|sessions|attach|abort|approve`: tether sessions on Temporal.

`tether worker --address HOST:PORT --task-queue repo-a` runs a worker in the current workspace
(its `tether.yml` is the worker's configuration; tools touch this directory's files). `tether
temporal dev` runs the bundled Temporal dev server (SQLite under `$TETHER_HOME/temporal`) until
Ctrl-C; the server dies with it, also when it is killed.

`tether run --temporal ADDRESS "task"` starts (or, with `--resume ID`, attaches to) a session
workflow, runs one turn and prints the answer (`--output-format json|stream-json` as without
`--temporal`); Ctrl-C sends the `abort_turn` signal and waits for the turn's balanced end; the
session log is written to `$TETHER_HOME/sessions` from the first turn on, so `tether sessions
show` works. `tether chat --temporal ADDRESS` does the same, one turn per line, and asks on the
terminal about calls that wait for approval. `tether app` routes `run`/`chat` here when
`--temporal` is given (`run_on_temporal`, `chat_on_temporal`); `tether temporal run ADDRESS
"task"` and `tether temporal chat ADDRESS` are the same commands.

`tether temporal sessions` lists the running sessions of a cluster (turn, state, last activity,
calls waiting for approval); `tether temporal attach ID` follows a running turn — also one
whose client is gone — to its end, `tether temporal abort ID` aborts it and waits for its
balanced end; both bring the local log up to date. `tether temporal approve ADDRESS SESSION
[CALL_ID] [--reject [--reason TEXT]]` lists or answers the tool calls waiting for a human on a
`--approvals` worker, from any machine.

The cluster of `sessions`, `attach` and `abort` is `--address`, else `$TEMPORAL_ADDRESS`, else
the one the session's local log records, else 127.0.0.1:7233. Every client and worker of a
namespace uses one payload store (`--payload-store`, else `$TETHER_TEMPORAL_PAYLOAD_STORE`, else
`$TETHER_HOME/temporal/payloads`).

`temporalio` is imported only when one of these commands runs, so tether without the
`temporal` extra still imports; they then say how to install it.
"""

from __future__ import annotations

# importing the command modules registers their commands with `app`
from .admin import abort, approve, attach_, sessions_
from .shared import app
from .turns import SessionOptions, chat, chat_on_temporal, run, run_on_temporal
from .worker import dev, worker

__all__ = [
    "SessionOptions",
    "abort",
    "app",
    "approve",
    "attach_",
    "chat",
    "chat_on_temporal",
    "dev",
    "run",
    "run_on_temporal",
    "sessions_",
    "worker",
]

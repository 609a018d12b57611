"""No private asyncio or CPython internals anywhere in `src/`.

They change between Python versions and event loops (3.12 stopped accepting generator-based
coroutines in `Task.__init__`; 3.14 moved current-task tracking to C; uvloop has no `_ready`), and
once made every tool call fail on 3.12+. This test keeps them out.
"""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

PRIVATE = re.compile(
    r"\b_ready\b|_current_tasks|_enter_task|_leave_task|_register_task|_unregister_task"
    r"|_fut_waiter|_must_cancel|TaskStepMethWrapper|__step\b|getrefcount|_clock_resolution"
    r"|\basyncio\.(?:\w+\.)?_[a-z]\w*|\bsys\._(?!_)\w+|_current_frames"
)
"""Internals asyncio and CPython keep to themselves: any `asyncio._x` or `asyncio.mod._x` name
(`_get_running_loop` included: it is exported, but the public `get_running_loop` under `try`
costs nothing when a loop runs), any `sys._x` (frames, `_getframe`, `_current_frames`), the task
machinery and reference counts. Public introspection (`inspect.currentframe`, `Task.get_stack`)
is allowed."""


def test_src_names_no_private_asyncio_or_cpython_internal() -> None:
    hits = [
        f"{path.relative_to(SRC)}:{number}: {line.strip()}"
        for path in sorted(SRC.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PRIVATE.search(line)
    ]

    assert hits == []

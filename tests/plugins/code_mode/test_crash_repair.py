"""A tether process killed with SIGKILL in the middle of a `run_code` leaves a session log that
opening (what `sessions resume` does) repairs: each open Code Mode child gets a
`tool/code-dispatch` of `TOOL_OUTCOME_UNKNOWN` citing its start, then the open `run_code` call
its `tool/result`, then the turn closes. `sessions show` nests the children under the call."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

from tether.agent.session import SessionStore

from ..shell._support import until

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from tether import AbortController
    from tether.agent.session import SessionStore
    from tether.kernel import Context
    from tether.plugins.code_mode import plugin as code_mode
    from tether.plugins.shell import bash as bash_plugin, plugin as shell_plugin
    from tether.tools import ToolExecutionInput, ToolRuntime

    class Agent:
        def __init__(self, session):
            self.session = session

    async def main(root, project):
        ctx = Context()
        await ctx.plugin(ToolRuntime)
        await ctx.plugin(shell_plugin, {"grace_ms": 200, "cwd": project})
        await ctx.plugin(bash_plugin, {"enable_run_in_background": False})
        await ctx.plugin(code_mode)
        session = SessionStore(root).create(cwd=Path(project))
        print(session.id, flush=True)
        session.turn_start(1)
        session.step_start(1, 1)
        session.tool_call(1, 1, "rc", "run_code", "{}")
        code = (
            "await tools.bash({'command': 'touch started; exec sleep 30', 'description': 'w'})"
        )
        await ctx.tools.execute(ToolExecutionInput(
            call_id="rc", name="run_code", agent=Agent(session),
            arguments={"code": code, "description": "Wait for a while"},
            signal=AbortController().signal,
        ))

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


async def test_a_killed_run_leaves_a_log_whose_open_children_are_repaired(
    tmp_path: Path, project: Path
) -> None:
    root = tmp_path / "sessions"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[3] / "src")}
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SCRIPT,
        str(root),
        str(project),
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    assert child.stdout is not None
    session_id = (await child.stdout.readline()).decode().strip()
    try:
        await until((project / "started").exists)
    finally:
        child.kill()  # SIGKILL: its contained command ends with it
        await child.wait()

    log = SessionStore(root).open(session_id)
    try:
        events = [(e.type, e.data) for e in log.events]
    finally:
        log.close()

    types = [kind for kind, _ in events]
    start = types.index("tool/code-dispatch-start")
    child_end = types.index("tool/code-dispatch")
    parent_end = types.index("tool/result")
    assert start < child_end < parent_end
    started, ended = events[start][1], events[child_end][1]
    assert started["sub_call_id"] == "rc:code:1"
    assert started["parent_call_id"] == "rc"
    assert ended["sub_call_id"] == "rc:code:1"
    assert ended["error"]["info"]["code"] == "TOOL_OUTCOME_UNKNOWN"  # type: ignore[index]
    assert events[parent_end][1]["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"  # type: ignore[index]
    assert types[-1] == "turn/end"

"""The swap race of `write` (and of `read`), run as a script (so the test can run it as another
user):

    python _swap_race.py WORKSPACE OUTSIDE COUNT MECHANISM SWAPPER_PYTHON [write|read|stat]

`WORKSPACE` holds a directory `d` and a link `s` to `OUTSIDE`; a real background process swaps
the two names in a loop (`renameat2(RENAME_EXCHANGE)` through ctypes) while COUNT `write` calls
of `d/f<i>` go through the tool. MECHANISM is `openat2` (the default resolution) or `walk` (the
per-component walk forced); SWAPPER_PYTHON runs the swapper (any Python). Prints one JSON
object: how many writes succeeded, the failures' codes and messages (distinct), how many swaps
the swapper made. With `read`, `d/secret` and `OUTSIDE/secret` hold different texts and the
COUNT calls are `read`s of `d/secret`: `leaked` counts the results that show the outside one.
With `stat`, `OUTSIDE/secret` is a directory instead and the calls are the same `read`s: a
failure saying it is not a regular file was learned from the outside one.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

SWAPPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
workspace = sys.argv[1]
a = os.path.join(workspace, "d").encode()
b = os.path.join(workspace, "s").encode()
AT_FDCWD, RENAME_EXCHANGE = -100, 2
swaps = 0
sys.stdout.write("ready\n")
sys.stdout.flush()
stop = os.path.join(workspace, "..", "stop")
while not os.path.exists(stop):
    for _ in range(200):
        if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
            raise SystemExit(f"renameat2: {os.strerror(ctypes.get_errno())}")
        swaps += 1
with open(os.path.join(workspace, "..", "swaps"), "w") as out:
    out.write(str(swaps))
"""


async def race(workspace: str, count: int, mechanism: str, operation: str) -> dict[str, object]:
    from tether.core.signals import AbortController
    from tether.kernel import Context
    from tether.plugins.fs import beneath
    from tether.plugins.fs import plugin as fs_plugin
    from tether.tools import ToolExecutionInput, ToolFailure, ToolRuntime, ToolSuccess

    if mechanism == "walk":
        beneath._openat2_usable = False  # test-only: force the per-component walk
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(fs_plugin, {"root": workspace})
    succeeded = leaked = 0
    failures: dict[str, int] = {}
    try:
        for index in range(count):
            if operation in ("read", "stat"):
                arguments: dict[str, object] = {"file_path": "d/secret"}
            else:
                arguments = {"file_path": f"d/f{index}", "content": f"payload {index}\n"}
            result = await ctx.tools.execute(
                ToolExecutionInput(
                    call_id=f"c{index}",
                    name="read" if operation == "stat" else operation,
                    arguments=arguments,
                    signal=AbortController().signal,
                )
            )
            if isinstance(result, ToolSuccess):
                succeeded += 1
                leaked += "OUTSIDE" in str(result.content)
            else:
                assert isinstance(result, ToolFailure), result
                message = result.error.message.replace(f'/f{index}"', '/f<i>"')
                key = f"{result.code}: {message}"
                failures[key] = failures.get(key, 0) + 1
    finally:
        await ctx.dispose()
    return {
        "succeeded": succeeded,
        "leaked": leaked,
        "failures": failures,
        "openat2": beneath.openat2_available(),
    }


def main() -> None:
    workspace, outside, count, mechanism, python = sys.argv[1:6]
    operation = sys.argv[6] if len(sys.argv) > 6 else "write"
    os.mkdir(os.path.join(workspace, "d"))
    if operation in ("read", "stat"):
        with open(os.path.join(workspace, "d", "secret"), "w") as inside:
            inside.write("inside\n")
    if operation == "read":
        with open(os.path.join(outside, "secret"), "w") as secret:
            secret.write("OUTSIDE\n")
    if operation == "stat":
        os.mkdir(os.path.join(outside, "secret"))
    os.symlink(outside, os.path.join(workspace, "s"))
    swapper = subprocess.Popen(
        [python, "-c", SWAPPER, workspace], stdout=subprocess.PIPE, text=True
    )
    try:
        assert swapper.stdout is not None
        assert swapper.stdout.readline() == "ready\n"
        summary = asyncio.run(race(workspace, int(count), mechanism, operation))
    finally:
        with open(os.path.join(workspace, "..", "stop"), "w"):
            pass
        swapper.wait(timeout=60)
    with open(os.path.join(workspace, "..", "swaps")) as swaps:
        summary["swaps"] = int(swaps.read())
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

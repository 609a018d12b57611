"""What the shell's kernel probe costs a boot that starts it (issue 36): the Python it runs while
holding the GIL, which an agent's boot pays beside its own imports, and the child's wall time,
which it overlaps.

Run: `python bench/probe_cost.py [ROUNDS]` (default 11). Each round is a fresh interpreter that
first imports what a default `tether run` has imported before its first request anyway (the CLI's
agent command, every built-in plugin module, `importlib.metadata` — the kernel's entry-point scan
and httpx2 import it — and `httpx2`), then calls `kernel_support()` once, from its import on:

    cpu_ms    thread CPU time of the call (importing probe/bwrap/seccomp, finding and verifying
              the private `bwrap` copy from the wheel's RECORD, the seccomp program, spawning);
              the GIL is held for about this long, so a CPU-bound boot beside it waits as long
    wall_ms   wall time of the call (the above plus the `bwrap ... true` child, which runs
              without the GIL)
    modules   modules the call added to `sys.modules`

The first round also makes the private copy when `$TETHER_HOME` has none; the median hides it.
Prints the median of each and the modules of the last round.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile

_CHILD = """
import importlib, importlib.metadata, json, sys, time
import httpx2  # noqa: F401  (the first request imports it)
import tether.cli.commands.agent  # noqa: F401
from tether.agent.boot import BUILTINS
for _, module in BUILTINS:
    importlib.import_module(module.partition(":")[0])
before = set(sys.modules)
wall, cpu = time.perf_counter(), time.thread_time()
from tether.plugins.sandbox.probe import kernel_support
support = kernel_support()
cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
print(json.dumps({"cpu_ms": cpu * 1e3, "wall_ms": wall * 1e3,
                  "added": sorted(set(sys.modules) - before), "sandbox": support.sandbox}))
"""


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    home = tempfile.mkdtemp(prefix="tether-probe-bench-")
    results = []
    for _ in range(rounds):
        done = subprocess.run(
            [sys.executable, "-c", _CHILD],
            env={"TETHER_HOME": home, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
        )
        results.append(json.loads(done.stdout))
    cpu = statistics.median(r["cpu_ms"] for r in results)
    wall = statistics.median(r["wall_ms"] for r in results)
    added = results[-1]["added"]
    print(f"kernel probe after a default run's imports, median of {rounds} interpreters:")
    sandbox = results[-1]["sandbox"]
    print(f"  cpu {cpu:.1f} ms  wall {wall:.1f} ms  modules +{len(added)}  sandbox: {sandbox}")
    print(f"  added: {', '.join(added)}")


if __name__ == "__main__":
    main()

"""A `pids` cgroup per sandboxed command where one can be made (issue 32 item 7).

Contract: where this process can make a `pids` cgroup (root on a v1 or hybrid hierarchy, or a
delegated v2 subtree), `command_group(n)` makes `tether-<pid>-<k>` with `pids.max` = n; a process
moved into it and its children are counted, a fork past the bound fails with EAGAIN and `hit()`
says so; `remove()` removes it once it is empty; a new process removes the empty groups of
tethers that are gone. Where no group can be made, `command_group` is None (skipped here then).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tether.plugins.sandbox.cgroups import command_group, pids_base

BASE = pids_base()
pytestmark = pytest.mark.skipif(BASE is None, reason="no pids cgroup can be made here")

FORKS = """
import os, sys, time
children = []
for n in range(20):
    try:
        pid = os.fork()
    except OSError as exc:
        print(n, exc.errno)
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
"""


def test_a_command_group_bounds_the_processes_moved_into_it_and_says_it_was_hit() -> None:
    group = command_group(4)
    assert group is not None
    try:
        assert re.fullmatch(rf"tether-{os.getpid()}-\d+", Path(group.path).name)
        assert Path(group.path, "pids.max").read_text().strip() == "4"
        assert not group.hit()
        reader, writer = os.pipe()
        child = subprocess.Popen(
            [sys.executable, "-c", f"import os; os.read(0, 1)\n{FORKS}"],
            stdin=reader,
            stdout=subprocess.PIPE,
            text=True,
        )
        os.close(reader)
        group.add(child.pid)
        os.write(writer, b"x")
        os.close(writer)
        out, _ = child.communicate(timeout=60)

        assert out == "3 11\n"  # the child and three more: the fourth fork fails with EAGAIN
        assert group.hit()
    finally:
        group.remove()
    assert not os.path.exists(group.path)


def test_a_new_process_removes_the_empty_groups_of_tethers_that_are_gone() -> None:
    assert BASE is not None
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = Path(BASE) / f"tether-{gone.stdout.strip()}-0"
    stale.mkdir()
    try:
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from tether.plugins.sandbox.cgroups import pids_base; pids_base()",
            ],
            check=True,
        )

        assert not stale.exists()
    finally:
        if stale.exists():
            stale.rmdir()

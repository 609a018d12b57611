"""A directory the user added (`--add-dir`, `/add-dir`) is one of the sandbox's writable roots:
a sandboxed command writes there as in the workspace, its protected paths stay read-only, and
what lies outside every root is still refused — as this user and as an unprivileged one.

Contract: `touch` in the added directory makes the file; writing its `.git/config` or creating
its `.claude/settings.json` fails and leaves them as they were; a write next to it (outside every
root) fails. `LocalBashExecutor.add_writable_root` makes a directory a writable root of the
requests resolved afterwards.
"""

from __future__ import annotations

from pathlib import Path

from tether.plugins.shell.config import ShellConfig
from tether.plugins.shell.local import LocalBashExecutor
from tether.plugins.shell.seam import ShellRequest

from ._jail import Box


def added(box: Box) -> Path:
    directory = box.outside / "shared"
    directory.mkdir()
    box.own()
    return directory


def test_a_command_writes_a_file_in_an_added_directory(box: Box) -> None:
    shared = added(box)

    done = box.run(f"echo made > {shared}/made.txt", writable_roots=[shared])

    assert done.returncode == 0, done.stdout
    assert (shared / "made.txt").read_text() == "made\n"


def test_a_protected_path_in_an_added_directory_stays_read_only(box: Box) -> None:
    shared = added(box)
    (shared / ".git").mkdir()
    (shared / ".git" / "config").write_text("[core]\n")
    box.own()

    config = box.run(f"echo evil >> {shared}/.git/config", writable_roots=[shared])
    settings = box.run(
        f"mkdir -p {shared}/.claude && echo '{{}}' > {shared}/.claude/settings.json",
        writable_roots=[shared],
    )

    assert config.returncode != 0
    assert settings.returncode != 0
    assert (shared / ".git" / "config").read_text() == "[core]\n"
    assert not (shared / ".claude" / "settings.json").exists()


def test_a_write_beside_the_added_directory_is_refused(box: Box) -> None:
    shared = added(box)

    done = box.run(f"touch {box.outside}/beside.txt", writable_roots=[shared])

    assert done.returncode != 0
    assert not (box.outside / "beside.txt").exists()


async def test_add_writable_root_reaches_the_requests_resolved_afterwards(
    tmp_path: Path,
) -> None:
    executor = LocalBashExecutor(ShellConfig(cwd=str(tmp_path)))
    try:
        before = executor.resolve(ShellRequest(command="true")).sandbox.writable_roots
        executor.add_writable_root("/srv/shared")
        executor.add_writable_root("/srv/shared")
        after = executor.resolve(ShellRequest(command="true")).sandbox.writable_roots
    finally:
        await executor.aclose()

    assert (before, after) == ((), ("/srv/shared",))

"""Attacks on the user's git from inside a sandboxed command, each shown to have no effect on the
host (issue 32 §3, §8), as this user and as an unprivileged one, with real bwrap.

Contract: all of `.git` is read-only and can be neither renamed nor removed (its mount point:
EBUSY), so the user's next host `git status` / `git commit` runs nothing a command planted —
through `.git/config`, a new `.git`, `objects/info/alternates`, a `core.hooksPath` directory
(existing, moved or missing) or an `[include]` target; a commit inside fails with a refused write
whose sandbox note names `.git`; placeholders never show in `git status` inside; after a SIGKILL
the user's `git init` works and the next command removes what was left.
"""

from __future__ import annotations

import signal
import time

import pytest

from tether.plugins.sandbox import SandboxPolicy, sandbox_denial

from ._jail import Box, payload

pytestmark = pytest.mark.timeout(300)


def repository(box: Box) -> None:
    """A repository with one commit in the workspace, made on the host as the user."""
    (box.workspace / "README").write_text("hello\n")
    box.own()
    steps = [("git", "init", "-q", "."), ("git", "add", "README"), ("git", "commit", "-qm", "1")]
    for argv in steps:
        done = box.host(*argv)
        assert done.returncode == 0, done.stderr


def test_setting_core_fsmonitor_inside_runs_nothing_on_the_next_host_git_status(
    box: Box,
) -> None:
    repository(box)
    run, marker = payload(box)
    before = (box.workspace / ".git" / "config").read_bytes()

    done = box.run(
        f"git config core.fsmonitor '{run}'; echo '[core] fsmonitor = {run}' >> .git/config"
    )

    assert done.stdout.count("Read-only file system") == 2, done.stdout
    assert (box.workspace / ".git" / "config").read_bytes() == before
    assert box.host("git", "status").returncode == 0
    assert not marker.exists()


def test_renaming_git_fails_busy_and_no_new_repository_takes_its_place(box: Box) -> None:
    repository(box)
    run, marker = payload(box)

    done = box.run(
        f"mv .git .git-old; rm -rf .git; git init -q . && git config core.fsmonitor '{run}'; ls -A"
    )

    assert "cannot move '.git' to '.git-old': Device or resource busy" in done.stdout
    assert sorted(p.name for p in box.workspace.iterdir()) == [".git", "README"]
    assert box.host("git", "status").returncode == 0
    assert not marker.exists()


def test_gits_redirections_cannot_be_written(box: Box) -> None:
    repository(box)

    done = box.run(
        "echo /elsewhere/objects > .git/objects/info/alternates; echo .. > .git/commondir; "
        "mkdir .git/worktrees; echo evil > .git/HEAD"
    )

    assert done.stdout.count("Read-only file system") == 4, done.stdout
    assert not (box.workspace / ".git" / "objects" / "info" / "alternates").exists()
    assert not (box.workspace / ".git" / "commondir").exists()
    assert (box.workspace / ".git" / "HEAD").read_text().startswith("ref: ")


def test_a_hooks_path_directory_cannot_be_written_or_moved_aside(box: Box) -> None:
    repository(box)
    run, marker = payload(box)
    hooks = box.workspace / ".husky"
    hooks.mkdir()
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (hooks / "pre-commit").chmod(0o755)
    box.own()
    assert box.host("git", "config", "core.hooksPath", ".husky").returncode == 0

    done = box.run(
        f"echo '{run}' >> .husky/pre-commit; mv .husky .husky-old; "
        f"mkdir -p .husky && printf '#!/bin/sh\\n{run}\\n' > .husky/pre-commit"
    )

    assert "Device or resource busy" in done.stdout, done.stdout
    assert (hooks / "pre-commit").read_text() == "#!/bin/sh\nexit 0\n"
    assert box.host("git", "commit", "-q", "--allow-empty", "-m", "2").returncode == 0
    assert not marker.exists()


def test_a_missing_hooks_path_directory_cannot_be_created(box: Box) -> None:
    repository(box)
    run, marker = payload(box)
    assert box.host("git", "config", "core.hooksPath", "tools/hooks").returncode == 0

    done = box.run(
        f"mkdir -p tools/hooks && printf '#!/bin/sh\\n{run}\\n' > tools/hooks/pre-commit"
    )

    assert done.returncode != 0, done.stdout
    assert not (box.workspace / "tools").exists()  # the placeholder went with the command
    assert box.host("git", "commit", "-q", "--allow-empty", "-m", "2").returncode == 0
    assert not marker.exists()


def test_an_include_target_cannot_be_written_or_replaced_by_moving_its_directory(
    box: Box,
) -> None:
    repository(box)
    run, marker = payload(box)
    (box.workspace / "cfg").mkdir()
    (box.workspace / "cfg" / "extra.gitconfig").write_text("[user]\n\tname = t\n")
    box.own()
    include = ("git", "config", "include.path", "../cfg/extra.gitconfig")
    assert box.host(*include).returncode == 0

    done = box.run(
        f"echo '[core] fsmonitor = {run}' >> cfg/extra.gitconfig; mv cfg cfg-old; "
        f"mkdir -p cfg; echo '[core] fsmonitor = {run}' > cfg/extra.gitconfig"
    )

    assert "Device or resource busy" in done.stdout, done.stdout
    assert (box.workspace / "cfg" / "extra.gitconfig").read_text() == "[user]\n\tname = t\n"
    assert box.host("git", "status").returncode == 0
    assert not marker.exists()


def test_a_commit_inside_fails_and_the_sandbox_note_names_git(box: Box) -> None:
    repository(box)

    done = box.run("git commit -q --allow-empty -m inside")

    assert done.returncode != 0
    note = sandbox_denial(
        SandboxPolicy(), exit_code=done.returncode, output=done.stdout, writable=("/ws",)
    )
    assert note is not None
    assert ".git/index.lock': Read-only file system" in note
    assert "(not .git — a commit needs to run outside —" in note


def test_git_status_inside_shows_no_placeholder(box: Box) -> None:
    repository(box)

    done = box.run("git status --porcelain --untracked-files=all; ls -A")

    assert done.returncode == 0, done.stdout
    listed = [".claude", ".git", ".mcp.json", ".tether", "README", "tether.yml"]
    assert done.stdout.split() == listed  # no `??` line: git shows no empty directory


def test_after_a_sigkill_git_init_works_and_the_next_command_removes_the_rest(box: Box) -> None:
    started = box.workspace / "started"
    process = box.start("touch started; exec sleep 600")
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the command did not start within 120 s"
            time.sleep(0.01)
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)

    init = box.host("git", "init", "-q", ".")
    status = box.host("git", "status", "--porcelain", "--untracked-files=all")

    assert init.returncode == 0, init.stderr
    assert status.stdout == "?? started\n"
    assert box.run("true").returncode == 0
    assert sorted(p.name for p in box.workspace.iterdir()) == [".git", "started"]


def test_a_submodules_git_file_cannot_be_rewritten_or_moved_aside(box: Box) -> None:
    repository(box)
    lib = box.workspace / "vendor" / "lib"
    lib.mkdir(parents=True)
    (box.workspace / ".gitmodules").write_text('[submodule "lib"]\n\tpath = vendor/lib\n')
    (lib / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    box.own()

    done = box.run(
        "echo 'gitdir: ../../evil' > vendor/lib/.git; mv vendor/lib vendor/lib-old; "
        "mv vendor vendor-old; ls vendor"
    )

    assert done.stdout.count("Device or resource busy") == 2, done.stdout
    assert "Read-only file system" in done.stdout
    assert (lib / ".git").read_text() == "gitdir: ../../.git/modules/lib\n"

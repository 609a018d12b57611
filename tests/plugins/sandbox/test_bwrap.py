"""What a sandbox mounts, read from the one function that builds bwrap's arguments (issue 24 §2).

Contract: every layout is contained (`--die-with-parent --new-session --unshare-pid` and a fresh
/proc). Full access binds the host's `/` and `/dev` read-write and keeps the network. A sandbox
binds `/` read-only, then a minimal /dev, the namespace's /proc with /proc/sys, /proc/sysrq-trigger
and /proc/fs read-only after it, a private /tmp, the writable roots, the anchors onto themselves,
and the protected paths read-only after the roots that contain them; it drops every capability,
leaves the network unless asked, and loads the seccomp filter. `bwrap` is `$TETHER_BWRAP`, else
the wheel's, else one in an absolute directory of PATH.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.plugins.sandbox import bwrap
from tether.plugins.sandbox.bwrap import Layout, bwrap_args, find_bwrap


def test_full_access_is_containment_only() -> None:
    assert bwrap_args(Layout(sandboxed=False, chdir="/w")) == [
        "--die-with-parent", "--new-session", "--unshare-pid",
        "--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
        "--chdir", "/w", "--",
    ]  # fmt: skip


def test_a_sandbox_mounts_in_the_order_that_makes_the_protections_win() -> None:
    layout = Layout(
        sandboxed=True,
        chdir="/w/src",
        writable=("/w", "/cache"),
        anchors=("/w/cfg",),
        read_only=("/w/.git", "/w/cfg/extra.gitconfig", "/w/tether.yml"),
        network=False,
        user_namespace=True,
        seccomp_fd=7,
    )

    assert bwrap_args(layout) == [
        "--die-with-parent", "--new-session", "--unshare-pid",
        "--unshare-user", "--disable-userns",
        "--cap-drop", "ALL", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--unshare-net",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--ro-bind-try", "/proc/sys", "/proc/sys",
        "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
        "--ro-bind-try", "/proc/fs", "/proc/fs",
        "--tmpfs", "/tmp",
        "--bind", "/w", "/w", "--bind", "/cache", "/cache",
        "--bind", "/w/cfg", "/w/cfg",
        "--ro-bind", "/w/.git", "/w/.git",
        "--ro-bind", "/w/cfg/extra.gitconfig", "/w/cfg/extra.gitconfig",
        "--ro-bind", "/w/tether.yml", "/w/tether.yml",
        "--seccomp", "7",
        "--chdir", "/w/src", "--",
    ]  # fmt: skip


def test_network_access_keeps_the_host_network_and_no_user_namespace_drops_only_caps() -> None:
    args = bwrap_args(Layout(sandboxed=True, chdir="/", network=True, user_namespace=False))

    assert "--unshare-net" not in args
    assert "--unshare-user" not in args
    assert args[args.index("--cap-drop") + 1] == "ALL"


def test_tether_bwrap_names_the_bwrap_and_empty_means_none() -> None:
    assert find_bwrap({"TETHER_BWRAP": "/opt/bwrap"}) == "/opt/bwrap"
    assert find_bwrap({"TETHER_BWRAP": ""}) is None


def test_without_the_wheel_only_absolute_path_entries_are_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "bin"
    planted.mkdir()
    (planted / "bwrap").write_text("#!/bin/sh\n")
    (planted / "bwrap").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(bwrap, "trusted_binary", lambda *_a, **_k: None)  # no wheel

    assert find_bwrap({"PATH": "bin"}) is None  # relative: a workspace could plant it
    assert find_bwrap({"PATH": str(planted)}) == str(planted / "bwrap")


def test_bounded_tmpfs_and_what_tether_runs_from_are_mounted_after_their_parents() -> None:
    layout = Layout(
        sandboxed=True,
        chdir="/w",
        writable=("/w",),
        read_only=("/w/tether.yml",),
        tmp_size=8388608,
        immutable=("/w/.venv",),
    )

    args = bwrap_args(layout)

    assert args[args.index("--size") :] == [
        "--size", "8388608", "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
        "--size", "8388608", "--tmpfs", "/tmp",
        "--bind", "/w", "/w",
        "--ro-bind", "/w/tether.yml", "/w/tether.yml",
        "--ro-bind", "/w/.venv", "/w/.venv",
        "--chdir", "/w", "--",
    ]  # fmt: skip
    assert args.index("--dev") < args.index("--size")

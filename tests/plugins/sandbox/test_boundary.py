"""`check_write`: may the model write this path under this policy (the file tools' side of the
sandbox)? Read-only writes nothing; workspace-write writes inside a writable root but never a
protected path or anything under one; full access writes anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.plugins.sandbox.boundary import FILESYSTEM_ROOT, WriteCheck, check_write
from tether.plugins.sandbox.policy import SandboxMode, SandboxPolicy

WORKSPACE_WRITE = SandboxPolicy()
PROTECTED = "a file a program outside the sandbox trusts later: git, tether and agent settings"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    return root


def test_a_file_in_the_workspace_may_be_written(workspace: Path) -> None:
    path = str(workspace / "src" / "a.py")
    assert check_write(WORKSPACE_WRITE, str(workspace), path) == WriteCheck(path, str(workspace))


@pytest.mark.parametrize(
    ("relative", "shown"),
    [
        ("tether.yml", "tether.yml"),
        (".mcp.json", ".mcp.json"),
        (".claude/settings.json", ".claude"),
        (".claude/deeper/hooks.json", ".claude"),
        (".git/config", ".git/config"),
        (".git/hooks/pre-commit", ".git/hooks"),
    ],
)
def test_a_protected_path_or_one_under_it_is_refused(
    workspace: Path, relative: str, shown: str
) -> None:
    path = str(workspace / relative)
    check = check_write(WORKSPACE_WRITE, str(workspace), path)
    assert check == WriteCheck(
        path, str(workspace), f"{shown} is protected by the sandbox ({PROTECTED})"
    )


def test_a_path_outside_every_writable_root_is_refused(workspace: Path, tmp_path: Path) -> None:
    path = str(tmp_path / "elsewhere" / "a.txt")
    check = check_write(WORKSPACE_WRITE, str(workspace), path)
    assert check == WriteCheck(
        path, FILESYSTEM_ROOT, f"it is outside the sandbox's writable roots ({workspace})"
    )


def test_a_configured_writable_root_may_be_written_but_its_protected_paths_not(
    workspace: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    policy = SandboxPolicy(writable_roots=(str(cache),))
    assert check_write(policy, str(workspace), str(cache / "x")).allowed
    assert check_write(policy, str(workspace), str(cache / "x")).root == str(cache)
    assert not check_write(policy, str(workspace), str(cache / "tether.yml")).allowed


def test_read_only_mode_refuses_even_the_workspace(workspace: Path) -> None:
    path = str(workspace / "a.txt")
    check = check_write(SandboxPolicy(mode=SandboxMode.READ_ONLY), str(workspace), path)
    assert check.refusal == "the sandbox is read-only (read-only mode writes nothing)"


def test_full_access_allows_protected_paths_and_the_world(workspace: Path, tmp_path: Path) -> None:
    policy = SandboxPolicy(mode=SandboxMode.DANGER_FULL_ACCESS)
    assert check_write(policy, str(workspace), str(workspace / "tether.yml")).allowed
    outside = check_write(policy, str(workspace), str(tmp_path / "a.txt"))
    assert (outside.allowed, outside.root) == (True, FILESYSTEM_ROOT)


def test_a_relative_path_is_a_value_error(workspace: Path) -> None:
    with pytest.raises(ValueError, match=r"check_write needs an absolute path, not 'a\.txt'"):
        check_write(WORKSPACE_WRITE, str(workspace), "a.txt")


def test_a_protected_path_that_is_a_link_protects_its_target(workspace: Path) -> None:
    (workspace / "settings-dir").mkdir()
    (workspace / ".claude").symlink_to("settings-dir")
    path = str(workspace / "settings-dir" / "settings.json")
    check = check_write(WORKSPACE_WRITE, str(workspace), path)
    assert check.refusal == f".claude is protected by the sandbox ({PROTECTED})"


def test_a_path_in_nested_roots_is_written_beneath_the_outermost(workspace: Path) -> None:
    inner = workspace / "cache"
    inner.mkdir()
    policy = SandboxPolicy(writable_roots=(str(inner),))
    check = check_write(policy, str(workspace), str(inner / "x"))
    assert (check.allowed, check.root) == (True, str(workspace))

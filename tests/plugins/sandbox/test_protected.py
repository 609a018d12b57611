"""The policy files that stay read-only inside a writable root, and the placeholders that pin the
missing ones (issue 24 §2).

Contract: `.git/hooks`, `.git/config`, `.claude`, `.mcp.json` and `tether.yml` are protected; a
missing one is named by its first missing component and pinned by a readable placeholder (an
empty 1555 directory or 444 file); `.git` as a file protects itself and its repository's hooks
and config; editor and shell start-up files are protected when present. Placeholders are removed
only when no sandboxed command holds its shared lock on the root, and nothing that is not a
placeholder is ever removed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tether.plugins.sandbox.protected import (
    Kind,
    Protection,
    RootLocks,
    ensure_placeholders,
    protected_paths,
    remove_placeholders,
)


def test_an_empty_root_names_each_missing_path_by_its_first_missing_component(
    tmp_path: Path,
) -> None:
    assert protected_paths(str(tmp_path)) == [
        Protection(str(tmp_path / ".git"), Kind.DIRECTORY),
        Protection(str(tmp_path / ".claude"), Kind.DIRECTORY),
        Protection(str(tmp_path / ".mcp.json"), Kind.FILE),
        Protection(str(tmp_path / "tether.yml"), Kind.FILE),
    ]


def test_a_repository_protects_its_hooks_and_config_not_the_rest_of_git(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".bashrc").write_text("")

    paths = {p.path: p.missing for p in protected_paths(str(tmp_path))}

    assert paths[str(tmp_path / ".git" / "hooks")] is None
    assert paths[str(tmp_path / ".git" / "config")] is Kind.FILE
    assert paths[str(tmp_path / ".vscode")] is None
    assert paths[str(tmp_path / ".bashrc")] is None
    assert str(tmp_path / ".git") not in paths
    assert str(tmp_path / ".idea") not in paths  # only when present


def test_a_gitfile_protects_itself_and_its_repositorys_hooks_and_config(tmp_path: Path) -> None:
    repository = tmp_path / "main.git" / "worktrees" / "w"
    common = tmp_path / "main.git"
    (common / "hooks").mkdir(parents=True)
    (common / "config").write_text("")
    repository.mkdir(parents=True)
    (repository / "commondir").write_text("../..\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {repository}\n")

    paths = [p.path for p in protected_paths(str(work))]

    assert paths[:3] == [str(work / ".git"), str(common / "hooks"), str(common / "config")]


def test_placeholders_are_readable_empty_and_recognizable(tmp_path: Path) -> None:
    ready = ensure_placeholders(protected_paths(str(tmp_path)))

    assert len(ready) == 4
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert modes == {".git": 0o1555, ".claude": 0o1555, ".mcp.json": 0o444, "tether.yml": 0o444}
    assert os.listdir(tmp_path / ".claude") == []
    assert (tmp_path / ".mcp.json").read_text() == ""


def test_placeholders_stay_while_a_command_holds_the_root_and_go_after(tmp_path: Path) -> None:
    root = str(tmp_path)
    first, second = RootLocks([root]), RootLocks([root])
    ensure_placeholders(protected_paths(root))

    first.release()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".claude", ".git", ".mcp.json", "tether.yml"
    ]  # fmt: skip
    second.release()
    assert list(tmp_path.iterdir()) == []


def test_only_placeholders_are_ever_removed(tmp_path: Path) -> None:
    (tmp_path / "tether.yml").write_text("")  # the user's own, empty but not 444
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{}")
    (tmp_path / ".claude").chmod(0o1555)  # shaped like a placeholder, but not empty

    ensure_placeholders(protected_paths(str(tmp_path)))
    removed = remove_placeholders(str(tmp_path))

    assert sorted(Path(p).name for p in removed) == [".git", ".mcp.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".claude", "tether.yml"]
    (tmp_path / ".claude").chmod(0o755)

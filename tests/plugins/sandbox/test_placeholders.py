"""Placeholders pin missing protected paths without following symlinks, and never outstay their
commands (issues 24 §2, 32 §8).

Contract: a placeholder is an empty directory with mode 1700, also where a file would be, made
relative to a descriptor of the root without following a symlink (a symlink on the way refuses,
creating nothing); an existing entry is left as it is. Placeholders are removed only when no
sandboxed command holds its shared lock on the root; nothing that is not a placeholder is
removed; the placeholders of earlier versions (1555 directories, 444 files) are removed too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tether.kernel.config import load_config
from tether.plugins.sandbox.placeholders import (
    PlaceholderRefused,
    RootLocks,
    ensure_placeholders,
    remove_placeholders,
)
from tether.plugins.sandbox.protected import Kind, Protection, protected_paths


@pytest.fixture(autouse=True)
def _environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TETHER_HOME", str(tmp_path / "home" / ".tether"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    return root


def test_placeholders_are_empty_directories_with_mode_1700(tmp_path: Path) -> None:
    root = workspace(tmp_path)

    ready = ensure_placeholders(str(root), protected_paths(str(root)))

    assert len(ready) == 5
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in root.iterdir()}
    assert modes == dict.fromkeys([".git", ".claude", ".mcp.json", "tether.yml", ".tether"], 0o1700)
    assert all(p.is_dir() and not list(p.iterdir()) for p in root.iterdir())


def test_a_tether_yml_placeholder_reads_as_no_configuration(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    ensure_placeholders(str(root), protected_paths(str(root)))

    assert load_config([root / "tether.yml"]).plugins == ()


def test_a_symlink_on_the_way_refuses_and_creates_nothing_outside(tmp_path: Path) -> None:
    root, outside = workspace(tmp_path), tmp_path / "outside"
    outside.mkdir()
    (root / ".config").symlink_to(outside)  # swapped in after the protected set was read

    with pytest.raises(PlaceholderRefused, match=r"\.config.* is a symlink"):
        ensure_placeholders(str(root), [Protection(str(root / ".config" / "git"), Kind.DIRECTORY)])

    assert list(outside.iterdir()) == []


def test_an_entry_made_meanwhile_is_kept_as_it_is(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text("{}")

    ready = ensure_placeholders(str(root), [Protection(str(root / ".claude"), Kind.DIRECTORY)])

    assert ready == [Protection(str(root / ".claude"), Kind.DIRECTORY)]
    assert (root / ".claude" / "settings.json").read_text() == "{}"


def test_placeholders_stay_while_a_command_holds_the_root_and_go_after(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    first, second = RootLocks([str(root)]), RootLocks([str(root)])
    ensure_placeholders(str(root), protected_paths(str(root)))

    first.release()
    assert len(list(root.iterdir())) == 5
    second.release()
    assert list(root.iterdir()) == []


def test_only_placeholders_are_ever_removed(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    (root / "tether.yml").write_text("")
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text("{}")
    (root / ".claude").chmod(0o1700)  # shaped like a placeholder, but not empty

    ensure_placeholders(str(root), protected_paths(str(root)))
    removed = remove_placeholders(str(root))

    assert sorted(Path(p).name for p in removed) == [".git", ".mcp.json", ".tether"]
    assert sorted(p.name for p in root.iterdir()) == [".claude", "tether.yml"]


def test_an_earlier_versions_placeholders_are_removed(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "hooks").chmod(0o1555)
    (root / ".git").chmod(0o1555)
    (root / "tether.yml").write_text("")
    (root / "tether.yml").chmod(0o444)

    remove_placeholders(str(root))

    assert list(root.iterdir()) == []


def test_git_init_works_over_a_placeholder_a_killed_tether_left(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    ensure_placeholders(str(root), protected_paths(str(root)))  # and no release: killed

    os.mkdir(root / ".git" / "objects")  # what `git init` does first, as the owner

    assert remove_placeholders(str(root)) == [
        str(root / p) for p in (".claude", ".mcp.json", "tether.yml", ".tether")
    ]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's tether can give a directory away")
def test_roots_placeholder_in_a_users_directory_is_that_users(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    os.chown(root, 65534, 65534)

    ensure_placeholders(str(root), [Protection(str(root / ".git"), Kind.DIRECTORY)])

    info = (root / ".git").stat()
    assert (info.st_uid, info.st_gid) == (65534, 65534)

"""The protected set of a writable root, read from `protected_paths(root)` (issues 24 §2, 32 §3,
§6, §9).

Contract: all of `.git` (or a `.git` file and the repository directories it names), `.claude`,
`.mcp.json`, `tether.yml` and `.tether` are protected in every root, a missing one named by its
first missing component and pinned; a submodule's `.git`; the in-root targets of git's
configuration (includes, `core.hooksPath`, the files its commands name); the files the servers
of `.mcp.json` and `tether.yml` and Claude Code's hooks run; the user's home configuration when
the root holds it; a symlink is protected at its target. Paths inside a protected path are not
listed again; `anchors` are the directories between a root and its protected paths.
"""

from __future__ import annotations

from pathlib import Path

from tether.plugins.sandbox.protected import Kind, Protection, anchors, protected_paths


def environ(home: Path, **more: str) -> dict[str, str]:
    """A user whose home and tether home are `home` and `home/.tether`, with no system git
    configuration."""
    return {
        "HOME": str(home),
        "TETHER_HOME": str(home / ".tether"),
        "GIT_CONFIG_NOSYSTEM": "1",
        **more,
    }


def paths(root: Path, home: Path, **more: str) -> dict[str, Kind | None]:
    return {p.path: p.missing for p in protected_paths(str(root), environ(home, **more))}


def test_an_empty_root_pins_git_claude_mcp_json_tether_yml_and_tether(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    root.mkdir()

    assert protected_paths(str(root), environ(home)) == [
        Protection(str(root / ".git"), Kind.DIRECTORY),
        Protection(str(root / ".claude"), Kind.DIRECTORY),
        Protection(str(root / ".mcp.json"), Kind.FILE),
        Protection(str(root / "tether.yml"), Kind.FILE),
        Protection(str(root / ".tether"), Kind.DIRECTORY),
    ]


def test_a_repository_protects_all_of_git_and_nothing_inside_it_again(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "objects" / "info").mkdir(parents=True)
    (root / ".vscode").mkdir()
    (root / ".bash_login").write_text("")

    found = paths(root, tmp_path / "home")

    assert found[str(root / ".git")] is None
    assert not [p for p in found if p.startswith(str(root / ".git") + "/")]
    assert found[str(root / ".vscode")] is None
    assert found[str(root / ".bash_login")] is None
    assert str(root / ".idea") not in found  # only when present


def test_a_gitfile_protects_itself_and_its_gitdir_and_commondir_whole(tmp_path: Path) -> None:
    common = tmp_path / "main.git"
    gitdir = common / "worktrees" / "w"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    root = tmp_path / "work"
    root.mkdir()
    (root / ".git").write_text(f"gitdir: {gitdir}\n")

    found = list(paths(root, tmp_path / "home"))

    assert found[:2] == [str(root / ".git"), str(common)]  # the gitdir lies inside the common
    assert str(gitdir) not in found


def test_a_submodules_git_file_is_protected(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".git" / "modules" / "lib").mkdir(parents=True)
    (root / "vendor" / "lib").mkdir(parents=True)
    (root / "vendor" / "lib" / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    (root / "vendor" / "empty").mkdir()
    (root / ".gitmodules").write_text(
        '[submodule "lib"]\n\tpath = vendor/lib\n[submodule "e"]\n\tpath = vendor/empty\n'
    )

    found = paths(root, tmp_path / "home")

    assert found[str(root / "vendor" / "lib" / ".git")] is None
    assert found[str(root / "vendor" / "empty" / ".git")] is Kind.DIRECTORY  # not checked out
    assert anchors(str(root), protected_paths(str(root), environ(tmp_path / "home"))) == [
        str(root / "vendor"),
        str(root / "vendor" / "lib"),
        str(root / "vendor" / "empty"),
    ]


def test_git_configuration_targets_inside_the_root_are_protected(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / ".git").mkdir(parents=True)
    (root / "tools").mkdir()
    (root / "tools" / "monitor.sh").write_text("")
    (root / "tools" / "clean.py").write_text("")
    (root / ".git" / "config").write_text(
        "[core]\n"
        "\thooksPath = .husky\n"
        '\tfsmonitor = "tools/monitor.sh --fast"\n'
        "[include]\n\tpath = ../cfg/extra.gitconfig\n"
        '[includeIf "onbranch:never"]\n\tpath = ../cfg/never.gitconfig\n'
        '[filter "lfs"]\n\tclean = python3 tools/clean.py %f\n'
        "[core]\n\tpager = less\n"
    )

    found = paths(root, home)

    assert found[str(root / ".husky")] is Kind.DIRECTORY
    assert found[str(root / "tools" / "monitor.sh")] is None
    assert found[str(root / "tools" / "clean.py")] is None
    assert found[str(root / "cfg")] is Kind.DIRECTORY  # first missing component of the include
    assert str(root / "less") not in found


def test_an_included_files_own_settings_count(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / ".git").mkdir(parents=True)
    (root / "cfg").mkdir()
    (root / "cfg" / "extra").write_text("[core]\n\tsshCommand = ./bin/ssh-wrap\n")
    (root / "bin").mkdir()
    (root / "bin" / "ssh-wrap").write_text("")
    home.mkdir()
    (home / ".gitconfig").write_text(f"[include]\n\tpath = {root}/cfg/extra\n")

    found = paths(root, home)

    assert found[str(root / "cfg" / "extra")] is None
    assert found[str(root / "bin" / "ssh-wrap")] is None


def test_what_mcp_servers_and_hooks_run_from_the_root_is_protected(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / "mcp").mkdir(parents=True)
    (root / "mcp" / "server.js").write_text("")
    (root / "scripts").mkdir()
    (root / "scripts" / "check.sh").write_text("")
    (root / ".mcp.json").write_text(
        '{"mcpServers": {"s": {"command": "node", "args": ["mcp/server.js", "--port", "1"]}}}'
    )
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(
        '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", '
        '"command": "\\"$CLAUDE_PROJECT_DIR\\"/scripts/check.sh"}]}]}}'
    )

    found = paths(root, home)

    assert found[str(root / "mcp" / "server.js")] is None
    assert found[str(root / "scripts" / "check.sh")] is None


def test_what_tether_yml_mcp_servers_run_from_the_root_is_protected(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "server").write_text("")
    (root / "tether.yml").write_text(
        "plugins:\n  - name: tether.plugins.mcp\n    config:\n      servers:\n"
        "        local: {command: ./bin/server}\n"
    )

    assert paths(root, home)[str(root / "bin" / "server")] is None


def test_a_root_that_holds_home_protects_its_configuration(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)

    found = paths(home, home, TETHER_HOME=str(home / "th"))

    assert found[str(home / ".ssh")] is None
    assert found[str(home / "th")] is Kind.DIRECTORY
    for name in (".gitconfig", ".bash_login", ".profile", ".zshenv", ".claude.json"):
        assert found[str(home / name)] is Kind.FILE, name
    assert found[str(home / ".config")] is Kind.DIRECTORY  # for .config/git and .config/fish
    assert found[str(home / ".local")] is Kind.DIRECTORY  # for .local/bin


def test_a_root_beside_home_protects_none_of_it(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    root.mkdir()

    assert not [p for p in paths(root, home) if not p.startswith(str(root))]


def test_a_symlink_is_protected_at_its_target_and_a_missing_target_inside_is_pinned(
    tmp_path: Path,
) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (outside / "claude").mkdir(parents=True)
    root.mkdir()
    (root / ".claude").symlink_to(outside / "claude")
    (root / "tether.yml").symlink_to("conf/tether.yml")
    (root / ".mcp.json").symlink_to(outside / "gone.json")

    found = paths(root, tmp_path / "home")

    assert found[str(outside / "claude")] is None
    assert found[str(root / "conf")] is Kind.DIRECTORY
    assert str(outside / "gone.json") not in found  # outside: no command can create it
    assert str(root / ".mcp.json") not in found


def test_anchors_are_the_directories_between_a_root_and_a_protected_path(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "a" / "b").mkdir(parents=True)
    protections = [Protection(str(root / "a" / "b" / "x")), Protection(str(root / ".git"))]

    assert anchors(str(root), protections) == [str(root / "a"), str(root / "a" / "b")]

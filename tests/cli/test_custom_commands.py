"""Custom slash commands read from Claude Code's files (issue 26 §3), without a terminal.

Contract: `.claude/commands/NAME.md` is `/NAME` (project), `~/.claude/commands/NAME.md` too
(user; the project's wins), a subdirectory names the namespace (`/frontend:button` also works);
the frontmatter is read as Claude Code writes it (`argument-hint: [pr] [priority]` is text, not
YAML); `$ARGUMENTS` is every argument, `$1`..`$9` the words (quoted words kept together);
``!`cmd` `` is replaced by what running it returns; arguments of a command without placeholders
are appended; a file that cannot be used is reported, never dropped silently.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.cli.chat.custom import CustomCommand, expand, load_commands

RESERVED = frozenset({"help", "clear"})


def write(root: Path, relative: str, text: str) -> Path:
    path = root / ".claude" / "commands" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def command(body: str, **fields: object) -> CustomCommand:
    return CustomCommand(name="x", path=Path("x.md"), scope="project", body=body, **fields)  # type: ignore[arg-type]


def test_project_and_user_commands_are_found_and_the_project_wins(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    write(home, "review.md", "user review")
    write(home, "mine.md", "only mine")
    write(project, "review.md", "project review")
    write(project, "frontend/button.md", "---\ndescription: Make a button\n---\nbody")

    loaded = load_commands(project, home, reserved=RESERVED)

    assert sorted(loaded.commands) == ["button", "frontend:button", "mine", "review"]
    assert loaded.commands["review"].body == "project review"
    assert loaded.commands["mine"].scope == "user"
    assert loaded.commands["button"].help == "Make a button (project:frontend)"
    assert loaded.problems == ()


def test_claude_codes_frontmatter_is_read_as_written(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pr.md",
        "---\n"
        "description: Review a pull request\n"
        "argument-hint: [pr-number] [priority]\n"
        "allowed-tools: Bash(git diff:*), Bash(gh pr view:*)\n"
        'model: "deepseek-reasoner"\n'
        "---\n"
        "Review PR $1 with priority $2.\n",
    )

    (found,) = load_commands(tmp_path, tmp_path / "home", reserved=RESERVED).commands.values()

    assert found.description == "Review a pull request"
    assert found.argument_hint == "[pr-number] [priority]"
    assert found.allowed_tools == ("Bash(git diff:*)", "Bash(gh pr view:*)")
    assert found.model == "deepseek-reasoner"
    assert found.help == "Review a pull request [pr-number] [priority] (project)"


def test_a_command_that_cannot_be_used_is_reported(tmp_path: Path) -> None:
    write(tmp_path, "broken.md", "---\ndescription: never closed\n")
    write(tmp_path, "help.md", "shadows a built-in")

    loaded = load_commands(tmp_path, tmp_path / "home", reserved=RESERVED)

    assert loaded.commands == {}
    assert sorted((p.name, why) for p, why in loaded.problems) == [
        ("broken.md", 'the frontmatter has no closing "---" line'),
        ("help.md", "/help is a built-in command"),
    ]


async def no_shell(cmd: str) -> str:
    raise AssertionError(f"nothing should run, got {cmd!r}")


async def test_arguments_replace_the_placeholders() -> None:
    expanded = await expand(
        command("Fix issue $1 in $2; all: $ARGUMENTS; none: [$4]"),
        '123 "the parser" extra',
        no_shell,
    )
    assert expanded.prompt == ('Fix issue 123 in the parser; all: 123 "the parser" extra; none: []')


async def test_arguments_of_a_command_without_placeholders_are_appended() -> None:
    expanded = await expand(command("Review the code."), "carefully", no_shell)
    assert expanded.prompt == "Review the code.\n\nARGUMENTS: carefully"


async def test_bang_commands_are_replaced_by_their_output_after_the_arguments() -> None:
    ran: list[str] = []

    async def run(cmd: str) -> str:
        ran.append(cmd)
        return f"<output of {cmd}>"

    expanded = await expand(
        command("Status: !`git status`\nLog of $1: !`git log -1 $1`\n"), "main", run
    )
    assert ran == ["git status", "git log -1 main"]
    assert expanded.prompt == (
        "Status: <output of git status>\nLog of main: <output of git log -1 main>"
    )
    assert expanded.ran == (
        ("git status", "<output of git status>"),
        ("git log -1 main", "<output of git log -1 main>"),
    )


@pytest.mark.parametrize("name", ["with space.md", "-dash.md"])
def test_a_file_name_that_is_not_a_command_name_is_reported(tmp_path: Path, name: str) -> None:
    write(tmp_path, name, "body")
    loaded = load_commands(tmp_path, tmp_path / "home", reserved=RESERVED)
    assert loaded.commands == {}
    assert len(loaded.problems) == 1

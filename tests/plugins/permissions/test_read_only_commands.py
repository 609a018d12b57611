"""Read-only bash commands run without asking; anything that could write, run another program or
leave the workspace asks (issue 26 §2).

Contract: the decision comes from the parsed line (`tether.plugins.permissions.command_line`),
never a prefix of its text. A line is read-only when every simple command is in the documented
list with arguments its entry allows, no redirection writes a file, nothing expands or
substitutes, and every path stays in the workspace; a chain or pipeline of read-only commands is
read-only.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.plugins.hooks import ToolNames
from tether.plugins.permissions import PermissionPolicy, parse_rule
from tether.plugins.permissions.readonly import READ_ONLY_COMMANDS, read_only_command
from tether.tools import Allow, Ask

NAMES = ToolNames()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "README.md").write_text("hello\n")
    os.symlink("/etc/passwd", tmp_path / "passwd-link")
    return tmp_path


READ_ONLY = [
    "ls",
    "ls -la src",
    "cat README.md",
    "head -n 5 README.md",
    "wc -l README.md src/x.py",
    "git status",
    "git status --short",
    "git diff HEAD~1 -- src",
    "git log --oneline -5",
    "git show HEAD:README.md",
    "git branch",
    "git branch -a -vv",
    "git branch --list 'feat*'",
    "git tag",
    "git stash list",
    "git -C src status",
    "git --no-pager diff",
    "rg TODO",
    "rg --pretty -n 'fn main' src",
    "grep -rn TODO .",
    "find . -name '*.py' -type f",
    "fd -e py",
    "sort -n README.md",
    "uniq README.md",
    "pwd",
    "echo done",
    "date +%s",
    "cd src && ls",
    "git status && git diff | head -20",
    "ls 2>/dev/null",
    "ls src 2>&1 | wc -l",
    "ls # and a comment; rm -rf /",
    "cat README.md | tail -n 3 &",
    "ls *.md src/*",
    "(ls src)",
    "{ ls; pwd; }",
    "cat <<EOF\nx\nEOF",
    "while true; do ls; done",
]

ASKS = {
    "ls > listing.txt": "a redirection that writes",
    "cat README.md >> copy.md": "an appending redirection",
    "ls &> out": "a redirection of both streams",
    "ls; rm -rf build": "a command that is not read-only after ;",
    "git status && rm x": "a command that is not read-only after &&",
    "ls | xargs rm": "a pipeline into a command that runs others",
    "find . -exec rm {} \\;": "find -exec",
    "find . -delete": "find -delete",
    "find . -fprint out": "find -fprint writes a file",
    "find *": "a glob find may read as an expression (a file named -delete)",
    "find . -name x -{delete,quit}": "a brace expansion",
    "sort -o out.txt README.md": "sort -o writes",
    "sort -ro out.txt README.md": "sort -o inside a cluster",
    "sort --outp=out.txt README.md": "an abbreviation of --output",
    "uniq in.txt out.txt": "uniq's second operand is written",
    "tree -o out.txt": "tree -o writes",
    "rg --pre ./evil.sh x": "rg --pre runs a program",
    "fd -x rm": "fd -x runs a program",
    "fd -HX rm": "fd -X inside a cluster",
    "git diff --output=patch.diff": "git diff --output writes",
    "git log --out=x": "an abbreviation of --output",
    "git -c core.pager=./evil log": "git -c can name a program",
    "git push": "git push is not read-only",
    "git branch new-branch": "git branch NAME creates a branch",
    "git branch -D main": "git branch -D deletes",
    "git tag v1.0": "git tag NAME creates a tag",
    "git stash": "git stash alone stashes",
    "git grep -O x": "git grep -O opens a program",
    "date -s 2020-01-01": "date -s sets the clock",
    "hostname evil": "hostname NAME sets the name",
    "FOO=1 ls": "an assignment (GIT_EXTERNAL_DIFF=x git diff runs x)",
    "ls $HOME": "an expansion",
    'cat "$FILE"': "an expansion inside double quotes",
    "cat $(ls)": "a command substitution",
    "cat `ls`": "a backtick substitution",
    "diff <(ls) <(ls src)": "a process substitution",
    "(cd src); cat ../x": "a path that leaves the workspace from where the line began",
    "echo $(rm -rf build)": "a substitution that runs a command that is not read-only",
    "cat <<EOF > out\nx\nEOF": "a here-document written to a file",
    "cat 'README.md": "an unterminated quote",
    "cat /etc/passwd": "an absolute path out of the workspace",
    "cat ~/.ssh/id_rsa": "a path in the home directory",
    "cat ../secret": "a relative path out of the workspace",
    "cat passwd-link": "a symlink out of the workspace",
    "cd .. && ls": "a cd out of the workspace",
    "cd && ls": "cd alone goes home",
    "git -C / status": "git -C out of the workspace",
    "grep -e x /etc/shadow": "a searched file out of the workspace",
    "python -c 'print(1)'": "a command that is not in the list",
    "/bin/ls": "a command named by path",
    "": "nothing to run",
}


@pytest.mark.parametrize("command", READ_ONLY)
def test_a_read_only_command_is_read_only(command: str, workspace: Path) -> None:
    assert read_only_command(command, workspace=workspace)


@pytest.mark.parametrize(("command", "why"), ASKS.items())
def test_a_command_that_could_write_or_leave_the_workspace_is_not(
    command: str, why: str, workspace: Path
) -> None:
    assert not read_only_command(command, workspace=workspace), why


def test_a_workdir_out_of_the_workspace_is_not_read_only(workspace: Path) -> None:
    assert read_only_command("ls", workspace=workspace, workdir="src")
    assert not read_only_command("ls", workspace=workspace, workdir="/etc")
    assert not read_only_command("ls", workspace=workspace, workdir="../..")


def test_the_list_names_the_usual_read_only_commands() -> None:
    assert {"ls", "cat", "head", "tail", "wc", "grep", "rg", "find", "git", "pwd"} <= set(
        READ_ONLY_COMMANDS
    )
    assert not {"rm", "sed", "awk", "tee", "xargs", "bash", "python"} & set(READ_ONLY_COMMANDS)


def test_a_line_of_read_only_commands_and_commands_a_rule_allows_is_allowed(
    workspace: Path,
) -> None:
    policy = PermissionPolicy(
        allow=[parse_rule("Bash(npm test:*)", names=NAMES, workspace=workspace)],
        workspace=workspace,
    )
    assert policy.decide("bash", {"command": "git status && npm test -- -x"}) == Allow()
    assert isinstance(policy.decide("bash", {"command": "git status && npm publish"}), Ask)
    assert isinstance(policy.decide("bash", {"command": "rm x && npm test"}), Ask)


def test_read_only_commands_can_be_turned_off(workspace: Path) -> None:
    policy = PermissionPolicy(workspace=workspace, read_only_commands=False)
    assert isinstance(policy.decide("bash", {"command": "ls"}), Ask)

"""Rules mean what they say (issue 34 item 3).

Contract: an `ask` rule asks in every mode (`bypassPermissions` skips only the mode's own ask;
`dontAsk` refuses it); a path a `Read(...)` rule denies is denied to every bash line that names
it — as an argument of any program (wrappers and `sh -c` bodies seen through), after `=`, as an
input redirection, through a glob that expands to it, from a directory a `cd` went to — and a
line that may read it without naming it (a recursive reader over a directory holding it, a word
only known at run time, a program only known at run time) asks, never runs unasked; a shell or
interpreter that reads its program from standard input is unreadable: it matches every deny and
ask rule for Bash, and is never allowed by the read-only list; a prefix or wildcard allow rule
never covers a redirection that writes a file, so "don't ask again" never saves a rule wider
than the redirections of what was approved.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.plugins.hooks import ToolNames
from tether.plugins.permissions import PermissionPolicy, canonical_mode, parse_rule
from tether.tools import Allow, Ask, Deny


def policy(
    workspace: Path,
    *,
    allow: tuple[str, ...] = (),
    ask: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    mode: str = "default",
) -> PermissionPolicy:
    def parsed(texts: tuple[str, ...]) -> list:  # type: ignore[type-arg]
        return [parse_rule(t, names=ToolNames(), workspace=workspace) for t in texts]

    return PermissionPolicy(
        allow=parsed(allow),
        ask=parsed(ask),
        deny=parsed(deny),
        mode=canonical_mode(mode),
        workspace=workspace,
    )


def bash(command: str, workdir: str | None = None) -> dict[str, str]:
    out = {"command": command, "description": "d"}
    if workdir is not None:
        out["workdir"] = workdir
    return out


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "key.txt").write_text("hunter2\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print(1)\n")
    return root


SECRETS = ("Read(./secrets/**)",)


# -- ask rules ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions", "yolo"])
def test_an_ask_rule_asks_in_every_mode_that_asks_at_all(workspace: Path, mode: str) -> None:
    p = policy(workspace, ask=("Bash(git push:*)",), mode=mode)
    assert p.decide("bash", bash("git push origin main")) == Ask(
        'permission rule "Bash(git push:*)" asks before this call'
    )


def test_an_ask_rule_beats_an_allow_rule_under_yolo(workspace: Path) -> None:
    p = policy(workspace, ask=("Bash(git push:*)",), allow=("Bash(git:*)",), mode="yolo")
    assert isinstance(p.decide("bash", bash("git push")), Ask)


def test_dont_ask_refuses_what_an_ask_rule_asks(workspace: Path) -> None:
    p = policy(workspace, ask=("Bash(git push:*)",), mode="dontAsk")
    assert p.decide("bash", bash("git push")) == Deny(
        'permission rule "Bash(git push:*)" asks before this call — refused: permission mode '
        '"dontAsk" never asks'
    )


def test_an_ask_rule_for_a_tool_asks_under_yolo(workspace: Path) -> None:
    p = policy(workspace, ask=("WebFetch",), mode="yolo")
    assert isinstance(p.decide("web_fetch", {"url": "https://example.com"}), Ask)


def test_an_mcp_rule_applies(workspace: Path) -> None:
    p = policy(workspace, deny=("mcp__github",), allow=("mcp__files__read",))
    assert isinstance(p.decide("mcp__github__create_issue", {}), Deny)
    assert p.decide("mcp__files__read", {}) == Allow()


# -- a Read deny holds against the commands that read ------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cat secrets/key.txt",
        "head -n1 secrets/key.txt",
        "tail secrets/key.txt",
        "less secrets/key.txt",
        "more secrets/key.txt",
        "cp secrets/key.txt /tmp/x",
        "mv secrets/key.txt src/",
        "grep hunter secrets/key.txt",
        "rg hunter secrets/key.txt",
        "base64 secrets/key.txt",
        "xxd secrets/key.txt",
        "od -c secrets/key.txt",
        "hexdump -C secrets/key.txt",
        "strings secrets/key.txt",
        "sed -n 1p secrets/key.txt",
        "awk 1 secrets/key.txt",
        "sort secrets/key.txt",
        "uniq secrets/key.txt",
        "wc -c secrets/key.txt",
        "diff secrets/key.txt src/app.py",
        "tar czf /tmp/x.tgz secrets",
        "source secrets/key.txt",
        ". secrets/key.txt",
        "tr a b < secrets/key.txt",
        "cat ./secrets/../secrets/key.txt",
        "cat /dev/null $(pwd)/x; cat secrets/key.txt",
        "dd if=secrets/key.txt of=/tmp/x",
        "python3 --file=secrets/key.txt",
        "cd secrets && cat key.txt",
        "cd secrets; cat < key.txt",
        "sudo cat secrets/key.txt",
        "bash -c 'cat secrets/key.txt'",
        "find src -name x -exec cat secrets/key.txt ';'",
        "cat secrets/*",
        "cat s*/key.txt",
        "cat secrets/nothing-matches-*",
        "vim secrets/key.txt",
    ],
)
def test_a_read_deny_is_denied_to_a_command_that_reads_the_path_by_name(
    workspace: Path, command: str
) -> None:
    verdict = policy(workspace, deny=SECRETS, mode="yolo").verdict("bash", bash(command))
    assert verdict.decision == "deny"
    assert verdict.rule == "Read(./secrets/**)"
    assert verdict.reason is not None
    assert verdict.reason.startswith(
        'denied by permission rule "Read(./secrets/**)": the command reads "'
    )


def test_a_read_deny_is_denied_to_a_command_run_in_the_denied_directory(workspace: Path) -> None:
    p = policy(workspace, deny=SECRETS)
    assert isinstance(p.decide("bash", bash("cat key.txt", workdir="secrets")), Deny)


def test_the_deny_reason_names_the_rule_and_the_path(workspace: Path) -> None:
    p = policy(workspace, deny=SECRETS)
    assert p.decide("bash", bash("cat secrets/key.txt")) == Deny(
        'denied by permission rule "Read(./secrets/**)": the command reads '
        f'"{workspace}/secrets/key.txt"'
    )


def test_a_symlink_to_a_denied_file_is_denied(workspace: Path) -> None:
    (workspace / "link").symlink_to(workspace / "secrets" / "key.txt")
    assert isinstance(policy(workspace, deny=SECRETS).decide("bash", bash("cat link")), Deny)


@pytest.mark.parametrize(
    "command",
    [
        "grep -r hunter .",
        "grep -rn hunter",
        "rg hunter",
        "cp -r . /tmp/copy",
        "tar czf /tmp/x.tgz .",
    ],
)
def test_a_recursive_reader_over_a_directory_holding_a_denied_path_asks(
    workspace: Path, command: str
) -> None:
    verdict = policy(workspace, deny=SECRETS, mode="yolo").verdict("bash", bash(command))
    assert verdict.decision == "ask"
    assert verdict.rule == "Read(./secrets/**)"
    assert verdict.reason is not None
    assert "may hold such a path" in verdict.reason


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("cat $F", 'the argument "$F" of "cat" is only known at run time'),
        ("cat $(cat list.txt)", 'the argument "$(cat list.txt)" of "cat" is only known'),
        ("$READER x", 'the program "$READER" is only known when the line runs'),
        ("cat < $F", 'the file "$F" is only known at run time'),
        ('cd "$D" && cat key.txt', "is only known at run time"),
        ("case x in x) cat y;; esac", "case statements are not read"),
    ],
)
def test_a_line_that_may_read_a_denied_path_unseen_asks_in_every_mode(
    workspace: Path, command: str, why: str
) -> None:
    for mode in ("default", "yolo"):
        verdict = policy(workspace, deny=SECRETS, mode=mode).verdict("bash", bash(command))
        assert verdict.decision == "ask", mode
        assert verdict.reason is not None
        assert why in verdict.reason


@pytest.mark.parametrize(
    "command", ["cat src/app.py", "ls src", "grep -r x src", "echo hi", "cat src/*.py"]
)
def test_a_read_deny_leaves_commands_that_read_elsewhere_alone(
    workspace: Path, command: str
) -> None:
    assert policy(workspace, deny=SECRETS).decide("bash", bash(command)) == Allow()


def test_a_read_ask_rule_asks_before_a_command_that_reads_the_path(workspace: Path) -> None:
    p = policy(workspace, ask=SECRETS, mode="yolo")
    assert isinstance(p.decide("bash", bash("cat secrets/key.txt")), Ask)
    assert p.decide("bash", bash("cat src/app.py")) == Allow()


def test_the_read_tools_honour_a_read_deny(workspace: Path) -> None:
    p = policy(workspace, deny=SECRETS, mode="yolo")
    assert isinstance(p.decide("read", {"file_path": "secrets/key.txt"}), Deny)
    assert isinstance(p.decide("grep", {"pattern": "x", "path": "secrets"}), Deny)
    assert isinstance(p.decide("glob", {"pattern": "*", "path": "secrets"}), Deny)


def test_a_bash_deny_rule_still_wins_with_its_own_reason(workspace: Path) -> None:
    p = policy(workspace, deny=("Bash(cat:*)", *SECRETS))
    assert p.decide("bash", bash("cat secrets/key.txt")) == Deny(
        'denied by permission rule "Bash(cat:*)"'
    )


# -- shells and interpreters reading their program from stdin ----------------------------------


STDIN_PROGRAMS = [
    "echo 'rm -f x' | bash",
    "echo 'rm -f x' | sh",
    "bash <<< 'rm -f x'",
    "sh -s < script.sh",
    "bash < script.sh",
    "bash -s -- arg < script.sh",
    "cat script.sh | bash -",
    "sudo bash <<< 'rm -f x'",
    "echo 'import os' | python3 -",
    "echo 'import os' | python3",
    "node <<< 'require(1)'",
    "perl < x.pl",
]


@pytest.mark.parametrize("command", STDIN_PROGRAMS)
def test_a_program_fed_on_stdin_is_denied_under_a_bash_deny_rule(
    workspace: Path, command: str
) -> None:
    verdict = policy(workspace, deny=("Bash(rm:*)",), mode="yolo").verdict("bash", bash(command))
    assert verdict.decision == "deny"
    assert verdict.reason is not None
    assert "reads the" in verdict.reason
    assert "from its standard input" in verdict.reason


@pytest.mark.parametrize("command", STDIN_PROGRAMS)
def test_a_program_fed_on_stdin_asks_under_a_bash_ask_rule_even_under_yolo(
    workspace: Path, command: str
) -> None:
    p = policy(workspace, ask=("Bash(rm:*)",), mode="yolo")
    assert isinstance(p.decide("bash", bash(command)), Ask)


@pytest.mark.parametrize("command", STDIN_PROGRAMS)
def test_a_program_fed_on_stdin_is_never_allowed_by_the_read_only_list(
    workspace: Path, command: str
) -> None:
    assert isinstance(policy(workspace).decide("bash", bash(command)), Ask)


@pytest.mark.parametrize(
    "command", ["bash script.sh", "python3 -m pytest", "python3 x.py", "node -e 1", "bash -c 'ls'"]
)
def test_a_shell_or_interpreter_given_its_program_is_read_as_before(
    workspace: Path, command: str
) -> None:
    assert (
        policy(workspace, deny=("Bash(rm:*)",), mode="yolo").decide("bash", bash(command))
        == Allow()
    )


# -- allow rules and "don't ask again" never widen past redirections ----------------------------


def test_a_prefix_allow_rule_does_not_cover_a_redirection_that_writes_a_file(
    workspace: Path,
) -> None:
    p = policy(workspace, allow=("Bash(echo:*)", "Bash(npm test:*)"))
    assert p.decide("bash", bash("echo hi | npm test -- -x 2>&1")) == Allow()
    assert p.decide("bash", bash("npm test > /dev/null")) == Allow()
    assert isinstance(p.decide("bash", bash("echo hi > /var/tmp/x")), Ask)
    assert isinstance(p.decide("bash", bash("npm test >> ~/.bashrc")), Ask)
    assert isinstance(p.decide("bash", bash("npm test &> out.log")), Ask)


def test_a_wildcard_allow_rule_with_a_redirection_covers_that_redirection(
    workspace: Path,
) -> None:
    p = policy(workspace, allow=("Bash(echo * > /var/tmp/*)",))
    assert p.decide("bash", bash("echo hi > /var/tmp/x")) == Allow()


def test_an_exact_allow_rule_covers_its_own_redirection(workspace: Path) -> None:
    p = policy(workspace, allow=("Bash(echo hi > /var/tmp/x)",))
    assert p.decide("bash", bash("echo hi > /var/tmp/x")) == Allow()
    assert isinstance(p.decide("bash", bash("echo hi > /var/tmp/y")), Ask)


def test_dont_ask_again_for_a_redirection_saves_the_exact_command(workspace: Path) -> None:
    p = policy(workspace)
    assert p.suggest_lasting_rules("bash", bash("echo hi > /var/tmp/x")) == (
        "Bash(echo hi > /var/tmp/x)",
    )


def test_a_saved_rule_never_allows_a_redirection_the_approved_command_had_not(
    workspace: Path,
) -> None:
    p = policy(workspace)
    (rule,) = p.suggest_lasting_rules("bash", bash("npm test -- -x"))
    assert rule == "Bash(npm test:*)"
    p.add_allow(p.parse(rule))
    assert p.decide("bash", bash("npm test -- -y")) == Allow()
    assert isinstance(p.decide("bash", bash("npm test > package.json")), Ask)
    assert isinstance(p.decide("bash", bash("npm test && rm -rf src")), Ask)


def test_read_deny_rules_become_globs_the_search_tools_leave_out(workspace: Path) -> None:
    from tether.plugins.search.ripgrep import relative_exclusions

    p = policy(workspace, deny=("Read(./secrets/**)", "Read(*.pem)", "Read(//etc/shadow)"))
    globs = p.read_exclusions()
    assert globs[:2] == (f"{workspace}/secrets/**", f"{workspace}/secrets/**/**")
    assert relative_exclusions(globs, str(workspace)) == (
        "/secrets/**",
        "/secrets/**/**",
        "/**/*.pem",
        "/**/*.pem/**",
    )
    assert relative_exclusions(globs, str(workspace / "src")) == ("**/*.pem", "**/*.pem/**")

"""Command rules see the programs a line runs (issue 26 §7).

Contract: deny and ask rules on `Bash(...)` match every simple command of a line under the
resolved name of each program it runs — `/bin/rm`, `./rm`, `\\rm` and `"r"m` are `rm`; the
wrappers `command`, `env`, `exec`, `nice`, `nohup`, `timeout`, `xargs`, `sudo`, `doas`, `su -c`,
`stdbuf`, `setsid`, `flock`, `busybox`, `watch`, `find -exec` are seen through; `sh -c`/`bash -c`
bodies and `eval` arguments are read as lines themselves, recursively. When part of a line
cannot be read (a program or wrapper option known only at run time, `case`, an unclosed quote),
deny and ask rules are assumed to match and the reason says so; allow rules never allow such a
line, nor a program under a path or wrapper they do not name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.plugins.hooks import ToolNames
from tether.plugins.permissions import PermissionPolicy, canonical_mode, parse_rule, programs_of
from tether.tools import Allow, Ask, Deny

WS = Path("/work/project")
DENIED = Deny('denied by permission rule "Bash(rm:*)"')


def policy(*, allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()) -> PermissionPolicy:
    def parsed(texts: tuple[str, ...]) -> list:  # type: ignore[type-arg]
        return [parse_rule(t, names=ToolNames(), workspace=WS) for t in texts]

    return PermissionPolicy(
        allow=parsed(allow),
        deny=parsed(deny),
        mode=canonical_mode("bypassPermissions"),
        workspace=WS,
    )


def bash(command: str) -> dict[str, str]:
    return {"command": command, "description": "d"}


def names(line: str) -> list[tuple[str | None, tuple[str, ...]]]:
    return [(p.name, p.via) for p in programs_of(line).programs]


# -- what runs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line", ["/bin/rm x", "./rm x", "../bin/rm x", "\\rm x", '"r"m x', "r\\m x"]
)
def test_a_programs_name_is_its_value_without_the_directory(line: str) -> None:
    assert names(line) == [("rm", ())]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("command rm x", [("command", ()), ("rm", ("command",))]),
        ("env FOO=1 -u BAR rm x", [("env", ()), ("rm", ("env",))]),
        ("env -S 'rm -rf' x", [("env", ()), ("rm", ("env",))]),
        ("exec -a name rm x", [("exec", ()), ("rm", ("exec",))]),
        ("nice -n 5 rm x", [("nice", ()), ("rm", ("nice",))]),
        ("nice -5 rm x", [("nice", ()), ("rm", ("nice",))]),
        ("nohup rm x", [("nohup", ()), ("rm", ("nohup",))]),
        ("timeout -s KILL 5 rm x", [("timeout", ()), ("rm", ("timeout",))]),
        ("xargs -0 -n 1 rm", [("xargs", ()), ("rm", ("xargs",))]),
        ("xargs -I{} rm {}", [("xargs", ()), ("rm", ("xargs",))]),
        ("sudo -u root rm x", [("sudo", ()), ("rm", ("sudo",))]),
        ("doas -u root rm x", [("doas", ()), ("rm", ("doas",))]),
        ("su -c 'rm x' root", [("su", ()), ("rm", ("su",))]),
        ("stdbuf -oL rm x", [("stdbuf", ()), ("rm", ("stdbuf",))]),
        ("setsid -f rm x", [("setsid", ()), ("rm", ("setsid",))]),
        ("flock /tmp/lock -c 'rm x'", [("flock", ()), ("rm", ("flock",))]),
        ("busybox rm x", [("busybox", ()), ("rm", ("busybox",))]),
        ("watch -n 1 rm x", [("watch", ()), ("rm", ("watch",))]),
        ("find . -name '*.o' -exec rm {} \\;", [("find", ()), ("rm", ("find",))]),
        ("/usr/bin/time -f %e rm x", [("time", ()), ("rm", ("time",))]),
    ],
)
def test_wrappers_are_read_with_their_options_and_the_program_they_run_follows(
    line: str, expected: list[tuple[str, tuple[str, ...]]]
) -> None:
    assert names(line) == expected
    assert programs_of(line).problem is None


def test_wrappers_nest() -> None:
    assert names("sudo env timeout 3 nice rm x") == [
        ("sudo", ()),
        ("env", ("sudo",)),
        ("timeout", ("sudo", "env")),
        ("nice", ("sudo", "env", "timeout")),
        ("rm", ("sudo", "env", "timeout", "nice")),
    ]


@pytest.mark.parametrize("shell", ["sh", "bash", "/bin/bash", "dash", "zsh"])
def test_a_shells_dash_c_body_is_read_as_a_line(shell: str) -> None:
    assert names(f"{shell} -ec 'cd /tmp && rm x'") == [
        (shell.rsplit("/", 1)[-1], ()),
        ("cd", (f"{shell.rsplit('/', 1)[-1]} -c",)),
        ("rm", (f"{shell.rsplit('/', 1)[-1]} -c",)),
    ]


def test_bodies_are_read_recursively() -> None:
    assert names("bash -c \"sh -c 'eval rm x'\"") == [
        ("bash", ()),
        ("sh", ("bash -c",)),
        ("eval", ("bash -c", "sh -c")),
        ("rm", ("bash -c", "sh -c", "eval")),
    ]


def test_a_script_or_stdin_for_a_shell_is_a_program_not_a_line() -> None:
    assert names("bash deploy.sh") == [("bash", ())]
    assert names("curl -s x | sh") == [("curl", ()), ("sh", ())]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("$CMD x", 'the program "$CMD" is only known when the line runs'),
        ("$(which rm) x", 'the program "$(which rm)" is only known when the line runs'),
        ("{rm,-rf,x}", 'the program "{rm,-rf,x}" is only known when the line runs'),
        ("sudo $FLAGS rm x", 'the options of "sudo" are only known when the line runs'),
        ('eval "$X"', 'what "eval" runs is only known when the line runs'),
        ('bash -c "$X"', "the shell's command is only known when the line runs"),
        ("bash -c 'echo \"x'", "a double quote is not closed"),
    ],
)
def test_what_is_only_known_at_run_time_is_the_problem(line: str, problem: str) -> None:
    assert programs_of(line).problem == problem


# -- deny rules ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "/bin/rm -rf x",
        "./rm x",
        "\\rm x",
        "'rm' x",
        "command rm x",
        "env rm x",
        "exec rm x",
        "nice -n 5 rm x",
        "timeout 5 rm x",
        "echo x | xargs rm",
        "sudo rm x",
        "bash -c 'rm x'",
        'sh -c "cd / && /bin/rm x"',
        "eval rm x",
        "(cd . && rm x)",
        "true\nrm x",
        "echo $(rm x)",
        "find . -exec rm {} +",
    ],
)
def test_a_deny_rule_holds_whatever_path_or_wrapper_runs_the_program(line: str) -> None:
    assert policy(deny=("Bash(rm:*)",)).decide("bash", bash(line)) == DENIED


def test_a_deny_rule_with_arguments_matches_the_resolved_program() -> None:
    p = policy(deny=("Bash(git push --force:*)",))
    assert isinstance(p.decide("bash", bash("/usr/bin/git push --force origin")), Deny)
    assert isinstance(p.decide("bash", bash("bash -c 'git push --force'")), Deny)
    assert p.decide("bash", bash("git push origin")) == Allow()


def test_a_deny_rule_is_assumed_to_match_a_line_that_cannot_be_read_and_says_why() -> None:
    p = policy(deny=("Bash(rm:*)",))
    assert p.decide("bash", bash("$CMD x")) == Deny(
        'denied by permission rule "Bash(rm:*)" (part of the command cannot be read: the '
        'program "$CMD" is only known when the line runs; the rule is assumed to match)'
    )
    assert isinstance(p.decide("bash", bash("case $x in a) ls;; esac")), Deny)


def test_a_quoted_mention_of_a_denied_program_is_not_a_call() -> None:
    p = policy(deny=("Bash(rm:*)",))
    assert p.decide("bash", bash("echo 'rm -rf x'")) == Allow()
    assert p.decide("bash", bash("grep rm notes.txt")) == Allow()
    assert p.decide("bash", bash("cat <<'EOF'\nrm x\nEOF")) == Allow()


def test_a_line_that_cannot_be_read_runs_under_yolo_when_no_rule_denies() -> None:
    assert policy().decide("bash", bash("case $x in a) ls;; esac")) == Allow()


# -- allow rules -----------------------------------------------------------------------------------


def ask_policy(*allow: str) -> PermissionPolicy:
    p = policy(allow=allow)
    p.mode = "default"
    return p


@pytest.mark.parametrize(
    "line",
    [
        "/tmp/evil/git status",
        "sudo git status",
        "bash -c 'git status'",
        "LD_PRELOAD=/tmp/x.so git status",
        "git status $(rm x)",
        "git status; case $x in a) ls;; esac",
        "git status 'unclosed",
    ],
)
def test_an_allow_rule_never_allows_what_it_does_not_name_as_written(line: str) -> None:
    p = ask_policy("Bash(git status:*)")
    assert isinstance(p.decide("bash", bash(line)), Ask)


def test_an_allow_rule_covers_the_command_as_written() -> None:
    p = ask_policy("Bash(git status:*)", "Bash(git diff:*)")
    assert p.decide("bash", bash("git status --short && git diff | tee diff.txt")) == Ask(
        'permission mode "default" asks before "bash" runs'
    )
    assert p.decide("bash", bash("git status --short && git diff")) == Allow()

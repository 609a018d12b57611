"""Reading a bash command line as shell syntax (`tether.plugins.permissions.command_line`).

Contract: a line is every simple command it runs — split at `;` `&` `&&` `||` `|` and newlines,
inside subshells, groups, `if`/`while`/`for` bodies and function definitions, and inside
command and process substitutions (those flagged `substituted`), in the order bash runs them.
A word's value is its text after quote removal; a word bash only knows at run time (a parameter,
a substitution, a glob, a brace expansion, an ANSI-C escape) has no value. Assignments and
redirections are kept apart from the words. Here-documents are data, except the substitutions of
an unquoted one. What the reader does not read (case, an unclosed quote, a stray `)`) is the
line's `problem`, never a guess.
"""

from __future__ import annotations

import pytest

from tether.plugins.permissions import parse_command_line


def values(line: str) -> list[list[str | None]]:
    return [[w.value for w in c.words] for c in parse_command_line(line).commands]


def texts(line: str) -> list[str]:
    return [c.text for c in parse_command_line(line).commands]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("a; b", [["a"], ["b"]]),
        ("a && b || c", [["a"], ["b"], ["c"]]),
        ("a | b |& c", [["a"], ["b"], ["c"]]),
        ("a & b", [["a"], ["b"]]),
        ("a\nb\n\nc", [["a"], ["b"], ["c"]]),
    ],
)
def test_control_operators_and_newlines_separate_commands(
    line: str, expected: list[list[str]]
) -> None:
    assert values(line) == expected
    assert parse_command_line(line).problem is None


def test_quotes_and_backslashes_are_removed_from_values_but_kept_in_the_text() -> None:
    line = parse_command_line("\"r\"m '-rf' a\\ b \\rm")
    (command,) = line.commands
    assert [w.value for w in command.words] == ["rm", "-rf", "a b", "rm"]
    assert command.text == "\"r\"m '-rf' a\\ b \\rm"


def test_operators_inside_quotes_are_text() -> None:
    assert values("echo 'a && b' \"c; d\" | wc -l") == [["echo", "a && b", "c; d"], ["wc", "-l"]]


@pytest.mark.parametrize(
    "word",
    ["$X", "${X}", '"$X"', "$(pwd)", "`pwd`", "*.py", "a?", "[ab]c", "{a,b}", "x{1..3}", "$'\\n'"],
)
def test_a_word_only_known_at_run_time_has_no_value(word: str) -> None:
    (command,) = (c for c in parse_command_line(f"echo {word}").commands if not c.substituted)
    assert command.words[1].text == word
    assert command.words[1].value is None


@pytest.mark.parametrize("word", ["'$X'", "\\$X", "{}", "x{y}", "[", "'*'", "$'plain'"])
def test_a_quoted_or_plain_word_keeps_its_value(word: str) -> None:
    (command,) = parse_command_line(f"echo {word}").commands
    assert command.words[1].value is not None


def test_assignments_and_redirections_are_kept_apart_from_the_words() -> None:
    (command,) = parse_command_line("FOO=1 BAR='a b' make -j2 >out.log 2>&1 <in").commands
    assert [w.text for w in command.assignments] == ["FOO=1", "BAR='a b'"]
    assert [w.value for w in command.words] == ["make", "-j2"]
    assert [(r.op, r.target.value) for r in command.redirects] == [
        (">", "out.log"),
        ("2>&", "1"),
        ("<", "in"),
    ]
    assert command.text == "FOO=1 BAR='a b' make -j2 >out.log 2>&1 <in"


def test_substitutions_are_commands_of_their_own_and_run_first() -> None:
    line = parse_command_line('echo $(rm a) `rm b` <(rm c) "$(rm d)" ${x:-$(rm e)}')
    assert [(c.text, c.substituted) for c in line.commands] == [
        ("rm a", True),
        ("rm b", True),
        ("rm c", True),
        ("rm d", True),
        ("rm e", True),
        ('echo $(rm a) `rm b` <(rm c) "$(rm d)" ${x:-$(rm e)}', False),
    ]
    assert line.substitutes


def test_an_assignment_with_a_substitution_runs_it() -> None:
    assert texts("x=$(rm a) ls") == ["rm a", "x=$(rm a) ls"]


def test_subshells_groups_and_compound_commands_are_read_through() -> None:
    assert values("(cd a && rm b) | tee log") == [["cd", "a"], ["rm", "b"], ["tee", "log"]]
    assert values("{ rm a; rm b; }") == [["rm", "a"], ["rm", "b"]]
    assert values("if test -f a; then rm a; elif x; then y; else z; fi") == [
        ["test", "-f", "a"],
        ["rm", "a"],
        ["x"],
        ["y"],
        ["z"],
    ]
    assert values("while true; do rm a; done") == [["true"], ["rm", "a"]]
    assert values("! rm a") == [["rm", "a"]]
    assert values("time -p rm a") == [["rm", "a"]]


def test_a_for_header_runs_only_its_substitutions() -> None:
    assert texts("for f in $(ls) b; do rm $f; done") == ["ls", "rm $f"]


def test_a_function_definition_runs_its_body_not_its_name() -> None:
    assert values("f() { rm a; }; f") == [["rm", "a"], ["f"]]
    assert values("function g { rm b; }") == [["rm", "b"]]


def test_a_test_expression_is_one_command() -> None:
    assert values("[[ -f a && -d b ]] && rm a") == [
        ["[[", "-f", "a", "&&", "-d", "b", "]]"],
        ["rm", "a"],
    ]


def test_a_quoted_here_document_is_data_and_an_unquoted_one_runs_its_substitutions() -> None:
    assert texts("cat <<'EOF'\n$(rm a)\nEOF\necho done") == ["cat <<'EOF'", "echo done"]
    assert texts("cat <<EOF\n$(rm a) && x\nEOF\necho done") == ["cat <<EOF", "rm a", "echo done"]
    assert texts("cat <<-EOF\n\tx\n\tEOF\nrm b") == ["cat <<-EOF", "rm b"]


def test_comments_are_not_commands() -> None:
    assert values("ls # ; rm a\necho a#b") == [["ls"], ["echo", "a#b"]]


def test_line_continuations_join_words() -> None:
    assert values("rm \\\n  -rf a") == [["rm", "-rf", "a"]]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("echo 'a", "a single quote is not closed"),
        ('echo "a', "a double quote is not closed"),
        ("echo $(ls", 'a ")" is missing'),
        ("echo `ls", "a backtick substitution is not closed"),
        ("ls )", 'a ")" closes nothing'),
        ("case $x in a) rm a;; esac", "case statements are not read"),
        ("for ((i=0; i<3; i++)); do rm $i; done", '"for ((…))" loops are not read'),
        ("cat <<EOF\nno end", 'the here-document has no "EOF" line'),
        ("echo x >", 'the redirection ">" has no target'),
        ("rm a \\", "the line ends with a backslash"),
        ("echo $((1 + $(rm a)))", "a substitution inside $((…)) is not read"),
    ],
)
def test_what_the_reader_cannot_read_is_the_lines_problem(line: str, problem: str) -> None:
    assert parse_command_line(line).problem == problem


def test_the_commands_before_a_problem_are_kept() -> None:
    line = parse_command_line("rm a; echo 'b")
    assert [c.text for c in line.commands] == ["rm a"]
    assert line.problem == "a single quote is not closed"

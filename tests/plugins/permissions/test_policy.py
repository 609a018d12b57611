"""Permission rules in Claude Code's syntax and the policy that applies them (no I/O).

Contract: `Bash(x:*)` is a prefix rule on whole words, `Bash(x)` an exact command, `*` a
wildcard; path rules are gitignore-style globs anchored like Claude Code's (`./` and `/` at the
workspace, `//` at the filesystem root, `~/` at home; a bare name at any depth); `WebFetch(
domain:x)` covers the host and its subdomains; `mcp__server__tool` is one MCP tool, `mcp__server`
and `mcp__server__*` every tool of that server; specifiers on MCP rules and on tools without a
grammar are ignored (and say why); a malformed rule is a ValueError. Precedence: deny > ask >
allow > mode. Deny and ask rules match any simple command of a bash line; allow rules must cover
every simple command and no substitution. Path rules see through `..` and symlinks. Modes:
`default` asks for side-effecting tools, `acceptEdits` also allows write/edit, `dontAsk` refuses
what would ask, `bypassPermissions` (`yolo`) allows what would ask; deny rules hold in every mode.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.plugins.hooks import ToolNames
from tether.plugins.permissions import (
    PermissionPolicy,
    canonical_mode,
    parse_command_line,
    parse_rule,
)
from tether.tools import Allow, Ask, Deny

WS = Path("/work/project")


def policy(
    *,
    allow: tuple[str, ...] = (),
    ask: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    mode: str = "default",
    workspace: Path = WS,
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


def bash(command: str) -> dict[str, str]:
    return {"command": command, "description": "d"}


# -- parsing ---------------------------------------------------------------------------------------


def test_rules_parse_into_their_tool_family_and_specifier() -> None:
    assert parse_rule("Bash(git status:*)", names=ToolNames(), workspace=WS).tools == {"bash"}
    assert parse_rule("Read", names=ToolNames(), workspace=WS).tools == {"read", "grep", "glob"}
    assert parse_rule("Edit(./src/**)", names=ToolNames(), workspace=WS).tools == {"edit", "write"}
    assert parse_rule("job_kill", names=ToolNames(), workspace=WS).tools == {"job_kill"}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("mcp__github__create_issue(x)", "MCP rules take no specifier"),
        ("WebSearch(tether)", '"WebSearch" rules take no specifier'),
    ],
)
def test_rules_tether_cannot_apply_are_kept_as_ignored_with_the_reason(text: str, why: str) -> None:
    parsed = parse_rule(text, names=ToolNames(), workspace=WS)
    assert (parsed.tools, parsed.ignored) == (frozenset(), why)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "Bash(",
            '"Bash(" is not a permission rule: write Tool or Tool(specifier), e.g. '
            '"Bash(git status:*)" or "Read(./src/**)"',
        ),
        ("Bash()", '"Bash()" is not a permission rule: a Bash(...) rule needs a command'),
        (
            "WebFetch(example.com)",
            '"WebFetch(example.com)" is not a permission rule: write WebFetch(domain:<host>)',
        ),
        ("Read( )", '"Read( )" is not a permission rule: a path pattern cannot be empty'),
    ],
)
def test_a_malformed_rule_says_what_to_write(text: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_rule(text, names=ToolNames(), workspace=WS)
    assert str(raised.value) == message


# -- bash ------------------------------------------------------------------------------------------


def test_a_prefix_rule_matches_whole_words_only() -> None:
    p = policy(allow=("Bash(git status:*)",))
    assert p.decide("bash", bash("git status")) == Allow()
    assert p.decide("bash", bash("git  status --short")) == Allow()
    assert isinstance(p.decide("bash", bash("git statusx")), Ask)


def test_an_exact_rule_matches_that_command_only() -> None:
    p = policy(allow=("Bash(npm run test)",))
    assert p.decide("bash", bash("npm run test")) == Allow()
    assert isinstance(p.decide("bash", bash("npm run test -- --watch")), Ask)


def test_a_wildcard_rule_matches_within_one_command() -> None:
    p = policy(allow=("Bash(git * main)",))
    assert p.decide("bash", bash("git push origin main")) == Allow()
    assert isinstance(p.decide("bash", bash("git push origin main && rm -rf /")), Ask)


def test_an_allow_rule_must_cover_every_command_of_a_line() -> None:
    p = policy(allow=("Bash(git status:*)", "Bash(git diff:*)"))
    assert p.decide("bash", bash("git status && git diff --stat")) == Allow()
    assert isinstance(p.decide("bash", bash("git status && rm -rf /")), Ask)
    assert isinstance(p.decide("bash", bash("git status $(rm -rf /)")), Ask)
    assert isinstance(p.decide("bash", bash("git status `rm -rf /`")), Ask)


def test_a_deny_rule_matches_any_command_of_a_line_substitutions_included() -> None:
    p = policy(allow=("Bash",), deny=("Bash(rm:*)",))
    for line in ("rm -rf x", "echo hi; rm -rf x", "echo $(rm x)", "FOO=1 rm x", "ls | rm x"):
        assert p.decide("bash", bash(line)) == Deny('denied by permission rule "Bash(rm:*)"'), line
    assert p.decide("bash", bash("echo 'rm -rf x'")) == Allow()


def test_splitting_honours_quotes_and_redirections() -> None:
    def texts(line: str) -> list[str]:
        return [c.text for c in parse_command_line(line).commands]

    assert texts("echo 'a && b' | wc -l") == ["echo 'a && b'", "wc -l"]
    assert texts("make 2>&1 | tee log") == ["make 2>&1", "tee log"]
    assert texts("cat <<EOF\nx && y\nEOF") == ["cat <<EOF"]


# -- precedence and modes --------------------------------------------------------------------------


def test_deny_beats_ask_beats_allow() -> None:
    p = policy(allow=("Bash",), ask=("Bash(git push:*)",), deny=("Bash(git push --force:*)",))
    assert p.decide("bash", bash("git push --force")) == Deny(
        'denied by permission rule "Bash(git push --force:*)"'
    )
    assert p.decide("bash", bash("git push")) == Ask(
        'permission rule "Bash(git push:*)" asks before this call'
    )
    assert p.decide("bash", bash("git pull")) == Allow()


def test_the_default_mode_asks_for_side_effects_and_allows_reading() -> None:
    p = policy()
    assert p.decide("bash", bash("make")) == Ask(
        'permission mode "default" asks before "bash" runs'
    )
    assert p.decide("bash", bash("ls -la")) == Allow()  # a read-only command
    for tool in ("write", "edit", "web_fetch", "web_search", "job_kill", "some_plugin_tool"):
        assert isinstance(p.decide(tool, {}), Ask), tool
    for tool in ("read", "grep", "glob", "todo_write", "job_list", "job_output"):
        assert p.decide(tool, {"file_path": "x"}) == Allow(), tool


def test_accept_edits_allows_writes_and_edits_but_still_asks_for_bash() -> None:
    p = policy(mode="acceptEdits")
    assert p.decide("write", {"file_path": "a", "content": ""}) == Allow()
    assert isinstance(p.decide("bash", bash("make")), Ask)


def test_dont_ask_refuses_what_would_ask() -> None:
    p = policy(mode="dontAsk", allow=("Bash(ls:*)",))
    assert p.decide("bash", bash("ls -la")) == Allow()
    assert p.decide("bash", bash("rm x")) == Deny(
        'permission mode "dontAsk" asks before "bash" runs — refused: permission mode "dontAsk" '
        "never asks"
    )


@pytest.mark.parametrize("mode", ["bypassPermissions", "yolo", "bypass"])
def test_yolo_allows_what_the_mode_would_ask_but_deny_and_ask_rules_still_hold(mode: str) -> None:
    p = policy(mode=mode, ask=("Bash(git push:*)",), deny=("Read(./.env)",))
    assert p.decide("bash", bash("git status -s")) == Allow()
    assert p.decide("web_fetch", {"url": "https://example.com"}) == Allow()
    assert p.decide("bash", bash("git push origin main")) == Ask(
        'permission rule "Bash(git push:*)" asks before this call'
    )
    assert isinstance(p.decide("read", {"file_path": ".env"}), Deny)


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match='unknown permission mode "careless"'):
        canonical_mode("careless")


# -- paths and domains -----------------------------------------------------------------------------


def test_path_rules_are_anchored_like_claude_codes() -> None:
    p = policy(
        deny=("Read(./.env)", "Read(//etc/**)", "Read(*.pem)", "Edit(/docs/**)"),
        ask=("Read(~/.ssh/**)",),
    )
    assert isinstance(p.decide("read", {"file_path": ".env"}), Deny)
    assert isinstance(p.decide("read", {"file_path": "src/../.env"}), Deny)
    assert isinstance(p.decide("read", {"file_path": "/etc/passwd"}), Deny)
    assert isinstance(p.decide("read", {"file_path": "certs/deep/server.pem"}), Deny)
    assert isinstance(p.decide("grep", {"pattern": "x", "path": "/etc"}), Deny)
    assert isinstance(p.decide("write", {"file_path": "docs/a.md", "content": ""}), Deny)
    assert isinstance(p.decide("write", {"file_path": "/docs/a.md", "content": ""}), Ask)
    assert isinstance(p.decide("read", {"file_path": "~/.ssh/id_ed25519"}), Ask)
    assert p.decide("read", {"file_path": "src/.env.example"}) == Allow()


def test_a_symlink_cannot_smuggle_a_denied_file_out_or_an_unallowed_one_in(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / ".env").write_text("SECRET=1")
    (tmp_path / "innocent.txt").symlink_to(tmp_path / ".env")
    (tmp_path / "src" / "escape.py").symlink_to(tmp_path / "outside.py")
    p = policy(deny=("Read(./.env)",), allow=("Edit(./src/**)",), workspace=tmp_path)
    assert isinstance(p.decide("read", {"file_path": "innocent.txt"}), Deny)
    assert p.decide("edit", {"file_path": "src/a.py", "old_string": "a", "new_string": "b"}) == (
        Allow()
    )
    assert isinstance(p.decide("write", {"file_path": "src/escape.py", "content": "x"}), Ask)


def test_a_domain_rule_covers_the_host_and_its_subdomains() -> None:
    p = policy(allow=("WebFetch(domain:example.com)",))
    assert p.decide("web_fetch", {"url": "https://example.com/a"}) == Allow()
    assert p.decide("web_fetch", {"url": "https://docs.EXAMPLE.com/a"}) == Allow()
    assert isinstance(p.decide("web_fetch", {"url": "https://example.com.evil.io/"}), Ask)
    assert isinstance(p.decide("web_fetch", {"url": "https://notexample.com/"}), Ask)


# -- session rules ---------------------------------------------------------------------------------


def test_the_suggested_session_rule_is_the_narrowest_that_allows_the_call() -> None:
    p = policy()
    assert p.suggest_rule("bash", bash("npm  run build")) == "Bash(npm run build)"
    assert p.suggest_rule("write", {"file_path": "notes/a.md"}) == "Edit(./notes/a.md)"
    assert p.suggest_rule("edit", {"file_path": "/tmp/x.txt"}) == "Edit(//tmp/x.txt)"
    assert p.suggest_rule("web_fetch", {"url": "https://Docs.python.org/3/"}) == (
        "WebFetch(domain:docs.python.org)"
    )
    assert p.suggest_rule("web_search", {"queries": ["x"]}) == "WebSearch"


def test_no_session_rule_is_offered_for_an_ask_rule_or_an_allowed_call() -> None:
    p = policy(ask=("Bash(git push:*)",))
    assert p.suggest_rule("bash", bash("git push")) is None
    assert p.suggest_rule("read", {"file_path": "a"}) is None


def test_a_session_rule_allows_the_call_from_then_on() -> None:
    p = policy()
    suggested = p.suggest_rule("bash", bash("make lint"))
    assert suggested is not None
    p.add_allow(p.parse(suggested))
    assert p.decide("bash", bash("make lint")) == Allow()
    assert isinstance(p.decide("bash", bash("make lint && make deploy")), Ask)


# -- MCP tools -------------------------------------------------------------------------------------


def test_an_mcp_tool_rule_matches_that_tool_only() -> None:
    rules = policy(allow=("mcp__github__create_issue",))
    assert rules.verdict("mcp__github__create_issue", {}).decision == "allow"
    assert rules.verdict("mcp__github__delete_repo", {}).decision == "ask"


@pytest.mark.parametrize("text", ["mcp__github", "mcp__github__*"])
def test_a_server_rule_matches_every_tool_of_that_server(text: str) -> None:
    rules = policy(deny=(text,))
    assert rules.verdict("mcp__github__create_issue", {}).decision == "deny"
    assert rules.verdict("mcp__gitlab__create_issue", {}).decision == "ask"


def test_a_deny_on_an_mcp_tool_wins_over_an_allow_of_its_server() -> None:
    rules = policy(allow=("mcp__github",), deny=("mcp__github__delete_repo",))
    assert rules.verdict("mcp__github__create_issue", {}).decision == "allow"
    assert rules.verdict("mcp__github__delete_repo", {}).decision == "deny"


# -- what the model is offered ---------------------------------------------------------------------


def test_a_deny_rule_naming_a_whole_tool_withholds_it_and_its_family() -> None:
    rules = policy(deny=("Read", "Bash"))

    assert [t for t in ("read", "grep", "glob", "bash", "write") if rules.withholds(t)] == [
        "read",
        "grep",
        "glob",
        "bash",
    ]


def test_a_deny_rule_with_a_specifier_withholds_nothing() -> None:
    rules = policy(deny=("Bash(rm:*)", "Read(./secrets/**)"))

    assert not rules.withholds("bash")
    assert not rules.withholds("read")


def test_a_server_wide_mcp_deny_withholds_every_tool_of_that_server() -> None:
    rules = policy(deny=("mcp__box",))

    assert rules.withholds("mcp__box__echo")
    assert not rules.withholds("mcp__other__echo")


def test_an_ask_rule_naming_a_whole_tool_keeps_it_offered() -> None:
    assert not policy(ask=("Bash",)).withholds("bash")

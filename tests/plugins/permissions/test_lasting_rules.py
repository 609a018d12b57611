""" "Don't ask again": the rule an approval saves, shown before it is saved, and kept across
restarts (issue 26 §2).

Contract: for a bash call the mode asked about, the rules offered are the command prefix of each
simple command that needs one (`npm test -- -x` → `Bash(npm test:*)`; `npm run build` → `Bash(npm
run build:*)`; `python -m pytest x` → `Bash(python -m pytest:*)`), or the exact command when a
prefix would open too much (`rm`, `python script.py`, `bash -c`, `env`...). Saving adds them to
`permissions.allow` of the workspace's `.claude/settings.local.json`, keeping everything else in
the file; a permissions plugin started later reads them and allows without asking. A file that
cannot be read as JSON is not overwritten. Rules allowed temporarily (a custom command's
`allowed-tools`) stop allowing when removed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.kernel import Context
from tether.plugins.approval import Approval, ApprovalAnswer, ApprovalQuestion
from tether.plugins.permissions import Permissions
from tether.plugins.permissions.prefix import prefix_rules
from tether.plugins.permissions.saved import (
    SettingsNotSaved,
    save_allow_rules,
    save_rules,
    unsave_rule,
)
from tether.tools import Allow, ToolSuccess

from ..hooks._support import FakeAgent, call_bash, text_of

UNAVAILABLE = 'Error: tool "bash" requires approval, but no approval channel is available'


@pytest.mark.parametrize(
    ("command", "rules"),
    [
        ("npm test -- --watch=false", ("Bash(npm test:*)",)),
        ("git commit -m 'fix the parser'", ("Bash(git commit:*)",)),
        ("npm run build --prod", ("Bash(npm run build:*)",)),
        ("python -m pytest tests -x", ("Bash(python -m pytest:*)",)),
        ("pytest tests/test_a.py", ("Bash(pytest:*)",)),
        ("cargo test && cargo clippy", ("Bash(cargo test:*)", "Bash(cargo clippy:*)")),
        ("go test ./...", ("Bash(go test:*)",)),
        ("rm -rf build", None),
        ("python script.py", None),
        ("bash -c 'make'", None),
        ("env FOO=1 make", None),
        ("git -C sub status", None),
        ("make", None),
        ("./deploy.sh", None),
        ("$RUN x", None),
    ],
)
def test_the_prefix_rule_names_what_the_command_does(
    command: str, rules: tuple[str, ...] | None
) -> None:
    assert prefix_rules(command) == rules


async def test_the_lasting_rules_of_a_call_are_its_prefixes_or_else_its_exact_command(
    ctx: Context, project: Path
) -> None:
    await ctx.plugin(Permissions, {"workspace": str(project), "claude_settings": False})
    permissions: Permissions = ctx.permissions

    def lasting(command: str) -> tuple[str, ...]:
        return permissions.suggest_lasting_rules("bash", {"command": command})

    assert lasting("npm test -- --watch=false") == ("Bash(npm test:*)",)
    assert lasting("rm -rf build") == ("Bash(rm -rf build)",)
    assert lasting("git status && npm test") == ("Bash(npm test:*)",)  # git status reads only
    assert lasting("ls -la") == ()  # nothing to ask about


def test_saving_keeps_the_rest_of_the_file_and_adds_a_rule_once(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.local.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"model": "x", "permissions": {"allow": ["Bash(ls:*)"]}}))

    assert save_allow_rules(tmp_path, ["Bash(npm test:*)"]) == path
    save_allow_rules(tmp_path, ["Bash(npm test:*)"])

    assert json.loads(path.read_text()) == {
        "model": "x",
        "permissions": {"allow": ["Bash(ls:*)", "Bash(npm test:*)"]},
    }


def test_saving_never_overwrites_a_file_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.local.json"
    path.parent.mkdir()
    path.write_text("{ not json")

    with pytest.raises(SettingsNotSaved, match=r"settings\.local\.json"):
        save_allow_rules(tmp_path, ["Bash(npm test:*)"])

    assert path.read_text() == "{ not json"


class Always:
    def __init__(self) -> None:
        self.questions: list[ApprovalQuestion] = []

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        self.questions.append(question)
        return "allow-always"


async def test_allow_always_saves_the_shown_rule_and_a_later_start_allows_without_asking(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    await ctx.plugin(Permissions, {"workspace": str(project), "claude_settings": True})
    await ctx.plugin(Approval)
    always = Always()
    ctx.approval.attach(always)

    first = await call_bash(ctx, "touch one.txt", agent=agent, call_id="c1")
    again = await call_bash(ctx, "touch two.txt", agent=agent, call_id="c2")

    assert isinstance(first, ToolSuccess)
    assert isinstance(again, ToolSuccess)
    (question,) = always.questions  # the second call matched the saved prefix rule
    saved = project / ".claude" / "settings.local.json"
    assert (question.lasting_rules, question.saved_to) == (("Bash(touch:*)",), str(saved))
    assert json.loads(saved.read_text()) == {"permissions": {"allow": ["Bash(touch:*)"]}}
    assert ctx.permissions.saved_rules == ("Bash(touch:*)",)

    later = Context()
    await later.plugin(Permissions, {"workspace": str(project), "claude_settings": True})
    assert later.permissions.decide("bash", {"command": "touch three.txt"}) == Allow()
    await later.dispose()


async def test_a_rule_allowed_temporarily_stops_allowing_when_removed(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    await ctx.plugin(Permissions, {"workspace": str(project), "claude_settings": False})
    await ctx.plugin(Approval)
    remove = ctx.permissions.allow_temporarily(["Bash(/bin/echo:*)"])

    during = await call_bash(ctx, "/bin/echo hi", agent=agent, call_id="c1")
    remove()
    after = await call_bash(ctx, "/bin/echo hi", agent=agent, call_id="c2")

    assert text_of(during).startswith("hi")
    assert text_of(after) == UNAVAILABLE


def test_a_rule_of_any_kind_is_saved_and_unsaved_keeping_the_rest(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "m", "permissions": {"deny": ["WebFetch"]}}))
    save_rules(tmp_path, "deny", ["Bash(rm:*)", "WebFetch"])
    assert json.loads(settings.read_text())["permissions"] == {"deny": ["WebFetch", "Bash(rm:*)"]}
    assert unsave_rule(tmp_path, "deny", "WebFetch") == settings
    assert json.loads(settings.read_text()) == {
        "model": "m",
        "permissions": {"deny": ["Bash(rm:*)"]},
    }


def test_unsaving_a_rule_the_file_does_not_have_writes_nothing(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text('{"permissions": {"allow": ["Read"]}}')
    assert unsave_rule(tmp_path, "allow", "Bash(ls:*)") is None
    assert settings.read_text() == '{"permissions": {"allow": ["Read"]}}'

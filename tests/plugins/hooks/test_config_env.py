"""Hooks run through the shell, so they get its environment policy (`sandbox.env` of tether.yml:
a variable that carries a credential does not reach a hook) and the settings files' `env`; a
`sandbox.env` in the hooks plugin's own config, which would not apply, is refused naming where it
goes."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tether.kernel import Context
from tether.plugins.hooks import claude_code
from tether.plugins.hooks.claude_code import Config

from ._support import FakeAgent, bash_hook, call_bash, write_settings


def test_a_hooks_config_with_a_sandbox_env_policy_is_refused() -> None:
    with pytest.raises(ValidationError, match="hooks get the shell's environment policy"):
        Config.model_validate({"sandbox": {"env": {"include": ["X"]}}})


def test_a_hooks_config_made_with_a_sandbox_env_policy_is_refused_too() -> None:
    with pytest.raises(ValidationError, match="hooks get the shell's environment policy"):
        Config(sandbox={"env": {"include": ["X"]}})  # type: ignore[arg-type]


def test_a_hooks_config_with_a_sandbox_mode_only_is_accepted() -> None:
    assert Config.model_validate({"sandbox": "read-only"}).sandbox.mode == "read-only"


async def test_a_hook_gets_the_shells_environment_policy(
    ctx: Context, project: Path, agent: FakeAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MYSQL_PWD", "hunter2")
    monkeypatch.setenv("DATABASE_URL", "postgres://app:hunter2@db/prod")
    monkeypatch.setenv("TETHER_TEST_PLAIN", "plain")
    spy = bash_hook(
        project / ".claude" / "hooks",
        "spy.sh",
        'cat > /dev/null; echo "${MYSQL_PWD-unset}|${DATABASE_URL-unset}|$TETHER_TEST_PLAIN" '
        '> "$CLAUDE_PROJECT_DIR/seen"',
    )
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(spy)}]}]
    }
    write_settings(project, hooks)
    await ctx.plugin(claude_code, {"project_dir": str(project)})

    await call_bash(ctx, "true", agent=agent)

    assert (project / "seen").read_text() == "unset|unset|plain\n"

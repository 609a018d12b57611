"""The environment policy's rules (`tether.plugins.sandbox.environment`), as values.

Contract: a name or a value that carries a credential is dropped unless `include` names it;
`PWD`/`OLDPWD`, `GIT_AUTHOR_*` and URLs without a password are not credentials; `exclude` wins
over `include`; `set` wins over the parent; a bad entry is one clear error. (What a real command
sees: tests/cli/test_environment_policy.py.)
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tether.agent.boot import sandbox_settings
from tether.kernel import TetherConfig
from tether.plugins.sandbox.environment import EnvPolicy, credential_reason, inherited
from tether.plugins.sandbox.policy import SandboxMode, SandboxPolicy, SandboxSettings


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("DATABASE_URL", "postgres://app:hunter2@db/x", "URL with a password"),
        ("REDIS_URL", "redis://:hunter2@cache:6379/0", "URL with a password"),
        ("REMOTE", "https://ghp_0123456789abcdefghij@github.com/o/r", "URL with a token"),
        ("MYSQL_PWD", "x", "name"),
        ("GITHUB_PAT", "x", "name"),
        ("NPM_CONFIG__AUTH", "x", "name"),
        ("DOCKER_AUTH_CONFIG", "{}", "name"),
        ("SENTRY_DSN", "https://k@o1.ingest.sentry.io/1", "name"),
        ("SSH_AUTH_SOCK", "/run/user/1000/ssh", "name"),
        ("db_password", "x", "name"),
        ("AWS_SECRET_ACCESS_KEY", "x", "name"),
        ("DEPLOY_NOTE", "ghp_0123456789abcdefghijklmnopqrstuvwxyz", "token"),
        ("KEYLESS", "AKIAABCDEFGHIJKLMNOP", "name"),
        ("CERT", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc", "token"),
    ],
)
def test_a_credential_is_recognized_by_its_name_or_its_value(
    name: str, value: str, reason: str
) -> None:
    assert credential_reason(name, value) == reason


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("PWD", "/work"),
        ("OLDPWD", "/"),
        ("GIT_AUTHOR_NAME", "A Person"),
        ("PATH", "/usr/bin:/bin"),
        ("HOMEPAGE", "https://example.org/a?b=c"),
        ("DATABASE_HOST_URL", "postgres://app@db.internal/x"),
        ("PROXY", "http://proxy:3128/x@y"),
        ("SSH_REMOTE", "ssh://git@github.com/o/r"),
    ],
)
def test_an_ordinary_variable_is_not_a_credential(name: str, value: str) -> None:
    assert credential_reason(name, value) is None


def test_include_keeps_a_credential_and_exclude_wins_over_include() -> None:
    parent = {"GITHUB_TOKEN": "t", "AWS_SECRET": "s", "AWS_REGION": "r", "LANG": "C"}
    policy = EnvPolicy(include=("github_*", "AWS_*"), exclude=("AWS_SECRET",))

    assert inherited(parent, policy) == {"GITHUB_TOKEN": "t", "AWS_REGION": "r", "LANG": "C"}


def test_inherit_core_keeps_the_core_variables_and_the_locale_only() -> None:
    parent = {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "EDITOR": "vi", "TMPDIR": "/t"}

    assert inherited(parent, EnvPolicy(inherit="core")) == {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C",
        "TMPDIR": "/t",
    }


def test_set_wins_over_the_parent_and_is_kept_whatever_its_name() -> None:
    policy = EnvPolicy(inherit="none", set={"CI": "1", "API_TOKEN": "for-tests"})

    assert inherited({"CI": "0", "EDITOR": "vi"}, policy) == {"CI": "1", "API_TOKEN": "for-tests"}


def test_an_empty_glob_is_refused_with_what_to_give() -> None:
    with pytest.raises(ValidationError, match="give a variable name or a glob like AWS_"):
        EnvPolicy(include=(" ",))


def test_an_unknown_key_and_an_unknown_inherit_are_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        SandboxSettings.model_validate({"env": {"inherit": "some", "includes": ["X"]}})

    assert {tuple(error["loc"]) for error in caught.value.errors()} == {
        ("env", "inherit"),
        ("env", "includes"),
    }


def test_a_sandbox_policy_from_the_command_line_keeps_the_configured_env_policy() -> None:
    config = TetherConfig(sandbox=(("tether.yml", {"env": {"include": ["DATABASE_URL"]}}),))

    settings = sandbox_settings(config, SandboxPolicy(mode=SandboxMode.READ_ONLY))

    assert (settings.mode, settings.env.include) == ("read-only", ("DATABASE_URL",))

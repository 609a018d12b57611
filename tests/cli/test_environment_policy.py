"""What of tether's environment a `bash` command sees (issue 32 item 9), end to end through
`tether tools call bash` with the project's `tether.yml`, as this user and as an unprivileged one
(`tests/users.py`).

Contract (`tether.plugins.sandbox.environment`):
- a variable that carries a credential by its name or its value does not reach the command:
  `DATABASE_URL` with a password, `MYSQL_PWD`, `GITHUB_PAT`, `NPM_CONFIG__AUTH`,
  `DOCKER_AUTH_CONFIG`, `SENTRY_DSN`, and the names tether already dropped (`*TOKEN*`, ...);
- a URL without a password, `PWD`-free names and ordinary variables do;
- `sandbox.env.include` lets a named one through, `exclude` drops an ordinary one, `set` adds
  one, `inherit: none` passes only what `include` and `set` name.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..users import USERS, User, private_directory
from ._support import TETHER

pytestmark = pytest.mark.timeout(300)

CREDENTIALS = {
    "DATABASE_URL": "postgres://app:hunter2@db.internal:5432/prod",
    "MYSQL_PWD": "hunter2",
    "GITHUB_PAT": "github_pat_11AAAAAAA0abcdefghijklmnopqrstuvwxyz",
    "NPM_CONFIG__AUTH": "dXNlcjpodW50ZXIy",
    "DOCKER_AUTH_CONFIG": '{"auths":{"registry.example":{"auth":"dXNlcjpodW50ZXIy"}}}',
    "SENTRY_DSN": "https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/42",
    "GITHUB_TOKEN": "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
    "MY_SERVICE_URL": "https://deploy:s3cr3t@ci.example/hook",
}
ORDINARY = {
    "HOMEPAGE_URL": "https://example.org/docs?x=1",
    "REDIS_URL": "redis://cache.internal:6379/0",
    "GIT_AUTHOR_NAME": "A Person",
    "TETHER_TEST_PLAIN": "plain",
}


@dataclass
class Box:
    user: User
    root: Path

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.root / "home"),
            "TETHER_HOME": str(self.root / "home" / ".tether"),
            "LANG": "C.UTF-8",
            **extra,
        }

    def configure(self, env_policy: dict[str, object]) -> None:
        path = self.root / "ws" / "tether.yml"
        path.write_text(json.dumps({"sandbox": {"env": env_policy}}))
        self.user.own(path)

    def seen(self, extra: dict[str, str]) -> dict[str, str]:
        """The environment `env -0` prints inside a bash command, as a mapping."""
        call = json.dumps({"command": "env -0 > env.out", "description": "test"})
        argv = [str(TETHER), "tools", "call", "bash", call, "--cwd", str(self.root / "ws")]
        done = subprocess.run(
            self.user.argv(argv),
            env=self.env(extra),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        raw = (self.root / "ws" / "env.out").read_text()
        return dict(entry.split("=", 1) for entry in raw.split("\0") if entry)


@pytest.fixture(params=USERS)
def box(request: pytest.FixtureRequest) -> Iterator[Box]:
    user: User = request.param
    with private_directory(user) as root:
        for name in ("ws", "home"):
            (root / name).mkdir()
        user.own(root)
        yield Box(user, root)


def test_variables_that_carry_credentials_do_not_reach_a_command(box: Box) -> None:
    seen = box.seen({**CREDENTIALS, **ORDINARY})

    assert sorted(set(CREDENTIALS) & set(seen)) == []


def test_ordinary_variables_and_a_url_without_a_password_reach_a_command(box: Box) -> None:
    seen = box.seen({**CREDENTIALS, **ORDINARY})

    assert {name: seen.get(name) for name in ORDINARY} == ORDINARY


def test_an_included_variable_reaches_a_command_though_it_carries_a_password(box: Box) -> None:
    box.configure({"include": ["DATABASE_URL", "mysql_*"]})

    seen = box.seen(CREDENTIALS)

    assert {name for name in CREDENTIALS if name in seen} == {"DATABASE_URL", "MYSQL_PWD"}
    assert seen["DATABASE_URL"] == CREDENTIALS["DATABASE_URL"]


def test_an_excluded_variable_does_not_reach_a_command_even_when_included(box: Box) -> None:
    box.configure({"include": ["TETHER_TEST_*"], "exclude": ["TETHER_TEST_PLAIN", "REDIS_*"]})

    seen = box.seen(ORDINARY)

    assert ("TETHER_TEST_PLAIN" in seen, "REDIS_URL" in seen, "HOMEPAGE_URL" in seen) == (
        False,
        False,
        True,
    )


def test_set_adds_a_variable_with_its_value(box: Box) -> None:
    box.configure({"set": {"CI": "1", "TETHER_TEST_PLAIN": "from tether.yml"}})

    seen = box.seen(ORDINARY)

    assert (seen["CI"], seen["TETHER_TEST_PLAIN"]) == ("1", "from tether.yml")


def test_inherit_none_passes_only_what_include_and_set_name(box: Box) -> None:
    box.configure({"inherit": "none", "include": ["PATH", "HOMEPAGE_URL"], "set": {"X": "y"}})

    seen = box.seen(ORDINARY)

    assert {name: seen.get(name) for name in (*ORDINARY, "PATH", "X")} == {
        "HOMEPAGE_URL": ORDINARY["HOMEPAGE_URL"],
        "REDIS_URL": None,
        "GIT_AUTHOR_NAME": None,
        "TETHER_TEST_PLAIN": None,
        "PATH": os.environ.get("PATH", os.defpath),
        "X": "y",
    }

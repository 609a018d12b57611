"""Hooks run through the shell, so they get its environment policy (`sandbox.env` of tether.yml)
and the settings files' `env`: a `sandbox.env` in the hooks plugin's own config, which would not
apply, is refused naming where it goes."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tether.plugins.hooks.claude_code import Config


def test_a_hooks_config_with_a_sandbox_env_policy_is_refused() -> None:
    with pytest.raises(ValidationError, match="hooks get the shell's environment policy"):
        Config.model_validate({"sandbox": {"env": {"include": ["X"]}}})


def test_a_hooks_config_with_a_sandbox_mode_only_is_accepted() -> None:
    assert Config.model_validate({"sandbox": "read-only"}).sandbox.mode == "read-only"

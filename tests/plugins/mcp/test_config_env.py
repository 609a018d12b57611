"""An MCP server's environment is its `env` entry (plus the SDK's few variables): a `sandbox.env`
policy on a server entry, which would not apply, is refused naming where the variables go."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tether.plugins.mcp.config import ServerConfig


def test_a_server_entry_with_a_sandbox_env_policy_is_refused() -> None:
    with pytest.raises(ValidationError, match=r'"sandbox\.env" is for the shell'):
        ServerConfig.model_validate({"command": "srv", "sandbox": {"env": {"include": ["X"]}}})


def test_a_server_entry_with_a_sandbox_mode_only_is_accepted() -> None:
    config = ServerConfig.model_validate({"command": "srv", "sandbox": "workspace-write"})

    assert config.sandbox.mode == "workspace-write"

"""`McpConfig` (issue 36: a `ConfigValue`; the server entry model is imported only when a
server is configured).

Contract: a mapping's `servers` become `ServerConfig`s, a bad server name or entry is refused
with the messages the pydantic model gave, made directly it validates alike, and a config with
no servers is made and read without importing the server entry's module.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from tether.kernel.config_models import make_config
from tether.kernel.errors import InvalidPluginConfig
from tether.plugins.mcp.config import McpConfig, ServerConfig

PATIENCE_S = 60.0


def test_a_mappings_servers_become_server_entries() -> None:
    config = make_config("mcp", McpConfig, {"servers": {"calc": {"command": "calc"}}})

    assert config.servers == {"calc": ServerConfig(command="calc")}


def test_a_bad_server_name_is_refused_naming_the_rule() -> None:
    with pytest.raises(InvalidPluginConfig) as caught:
        make_config("mcp", McpConfig, {"servers": {"a b": {"command": "c"}}})

    assert caught.value.detail == (
        'config: Value error, server name "a b" must use only letters, digits, "_" and "-" (it '
        'becomes part of the tool names mcp__<server>__<tool>), got {"servers": {"a b": '
        '{"command": "c"}}}'
    )


def test_a_bad_server_entry_is_refused_naming_its_path() -> None:
    with pytest.raises(InvalidPluginConfig) as caught:
        make_config("mcp", McpConfig, {"servers": {"web": {"type": "http"}}})

    assert caught.value.detail == (
        'config.servers.web: Value error, an http server needs "url", got {"type": "http"}'
    )


def test_made_directly_it_validates_its_servers() -> None:
    with pytest.raises(ValidationError, match='a stdio server needs "command"'):
        McpConfig(servers={"calc": {}})  # type: ignore[dict-item]


_NO_SERVERS = """
import sys
from tether.plugins.mcp import McpConfig
config = McpConfig(project_dir=sys.argv[1])
print(config.all_servers(), "tether.plugins.mcp.server_config" in sys.modules)
"""


def test_a_config_without_servers_never_imports_the_server_entry(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _NO_SERVERS, str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )

    assert (done.returncode, done.stdout) == (0, "{} False\n"), done.stderr

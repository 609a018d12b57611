"""`SdkServers.split`: the Claude Agent SDK's in-process servers (`"type": "sdk"`) are taken out of
`--mcp-config` before the agent boots, and every other server is left for the `mcp` plugin."""

from __future__ import annotations

import json

from tether.cli.sdk_servers import SdkServers


def test_sdk_servers_are_taken_out_and_the_others_are_kept_in_their_value() -> None:
    value = json.dumps(
        {
            "mcpServers": {
                "calc": {"type": "sdk", "name": "calc"},
                "files": {"command": "files-server", "args": ["--root", "."]},
            }
        }
    )

    split = SdkServers.split((value, "/path/to/servers.json"))

    assert split.names == ("calc",)
    assert [json.loads(split.configs[0]), split.configs[1]] == [
        {"mcpServers": {"files": {"command": "files-server", "args": ["--root", "."]}}},
        "/path/to/servers.json",
    ]


def test_values_without_sdk_servers_are_passed_on_unchanged() -> None:
    value = '{"mcpServers": {"files": {"command": "files-server"}}}'

    split = SdkServers.split((value, "{not json"))

    assert (split.names, split.configs) == ((), (value, "{not json"))

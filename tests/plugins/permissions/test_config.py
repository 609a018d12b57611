"""`PermissionsConfig` given as a value (issue 36: the agent boot hands the built-in its config
made in code, not a mapping to validate).

Contract: a value that names no mode lets a settings file's `permissions.defaultMode` choose it,
as a mapping without `mode` does, while one that names a mode (even `default`) keeps it; made
with bad values it fails at construction with the message the mapping path gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from tether.kernel import Context, InvalidPluginConfig
from tether.plugins.permissions import Permissions, PermissionsConfig


def settings_mode(project: Path, mode: str) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": {"defaultMode": mode}}), encoding="utf-8")


async def test_a_value_naming_no_mode_takes_the_settings_files_mode(
    ctx: Context, project: Path
) -> None:
    settings_mode(project, "acceptEdits")

    await ctx.plugin(Permissions, PermissionsConfig(workspace=str(project)))

    assert ctx.permissions.mode == "acceptEdits"


async def test_a_value_naming_the_default_mode_keeps_it_over_the_settings_file(
    ctx: Context, project: Path
) -> None:
    settings_mode(project, "acceptEdits")

    await ctx.plugin(Permissions, PermissionsConfig(mode="default", workspace=str(project)))

    assert ctx.permissions.mode == "default"


async def test_a_bad_rule_fails_construction_as_it_fails_the_mapping(ctx: Context) -> None:
    with pytest.raises(InvalidPluginConfig) as from_mapping:
        await ctx.plugin(Permissions, {"deny": ["Bash(ls"]})
    with pytest.raises(ValidationError) as from_value:
        PermissionsConfig(deny=["Bash(ls"])

    assert from_value.value.errors(include_url=False)[0]["msg"] in from_mapping.value.detail
    assert from_value.value.errors(include_url=False)[0]["loc"] == ("deny",)

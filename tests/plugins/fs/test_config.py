"""The `fs` plugin's config and its filesystem's: checked where they are made, with the messages
a config file's gets (issue 36: the agent boot hands `fs` its config as a value)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tether.kernel import Context, InvalidPluginConfig
from tether.plugins.fs import FsConfig, LocalFsConfig
from tether.plugins.fs import plugin as fs_plugin
from tether.plugins.sandbox import SandboxSettings


def test_a_config_made_with_bad_values_fails_where_it_is_made_naming_each() -> None:
    with pytest.raises(ValidationError) as caught:
        FsConfig(read_limit=0, directories=("a", 1), sandbox="yolo")  # type: ignore[arg-type]

    assert caught.value.title == "FsConfig"
    assert [(error["loc"], error["msg"]) for error in caught.value.errors()] == [
        (("directories", 1), "Input should be a valid string"),
        (
            ("sandbox", "mode"),
            "Value error, unknown sandbox mode 'yolo': use one of read-only, "
            "workspace-write, danger-full-access",
        ),
        (("read_limit",), "tool-fs: read_limit must be a positive integer"),
    ]


def test_the_filesystems_config_refuses_a_bad_sandbox_where_it_is_made() -> None:
    with pytest.raises(ValidationError) as caught:
        LocalFsConfig(sandbox={"writable_roots": [" "]})  # type: ignore[arg-type]

    assert [(error["loc"], error["msg"]) for error in caught.value.errors()] == [
        (
            ("sandbox", "writable_roots"),
            "Value error, writable_roots: an entry is empty; give a directory path",
        )
    ]


def test_lists_are_kept_as_tuples_and_a_mode_name_is_a_whole_sandbox() -> None:
    config = FsConfig(readable=["/r"], sandbox="read-only")  # type: ignore[arg-type]

    assert (config.readable, config.sandbox) == (("/r",), SandboxSettings(mode="read-only"))


async def test_a_mapping_is_refused_with_the_plugin_and_the_field_named() -> None:
    ctx = Context()
    with pytest.raises(InvalidPluginConfig) as caught:
        await ctx.plugin(fs_plugin, {"read_max_bytes": True})
    await ctx.dispose()

    assert str(caught.value) == (
        'plugin "fs": config.read_max_bytes: Input should be a valid integer, got true'
    )

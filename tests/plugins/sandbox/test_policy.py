"""How a sandbox is spelled (issue 24 §2): a mode name, or `{mode, writable_roots,
network_access}`; a bad value is one error naming the accepted modes; writable roots are made
absolute against the workspace."""

from __future__ import annotations

import os

import pytest
from pydantic import ValidationError

from tether.plugins.sandbox import SandboxMode, SandboxPolicy, SandboxSettings


def test_a_mode_name_is_a_whole_sandbox() -> None:
    assert SandboxSettings.model_validate("read-only") == SandboxSettings(mode="read-only")
    assert SandboxPolicy.of("danger-full-access").mode is SandboxMode.DANGER_FULL_ACCESS


def test_the_default_is_workspace_write_without_network() -> None:
    policy = SandboxSettings().policy("/w")

    assert policy == SandboxPolicy(mode=SandboxMode.WORKSPACE_WRITE)
    assert (policy.sandboxed, policy.network) == (True, False)


def test_an_unknown_mode_names_the_accepted_ones() -> None:
    with pytest.raises(
        ValidationError,
        match="unknown sandbox mode 'yolo': use one of read-only, "
        "workspace-write, danger-full-access",
    ):
        SandboxSettings.model_validate("yolo")
    with pytest.raises(ValueError, match="unknown sandbox mode"):
        SandboxPolicy.of("yolo")


def test_writable_roots_are_absolute_against_the_workspace() -> None:
    settings = SandboxSettings(writable_roots=("build", "~/.cache/uv", "/opt/out"))

    assert settings.policy("/w").writable_roots == (
        "/w/build",
        os.path.expanduser("~/.cache/uv"),
        "/opt/out",
    )


def test_full_access_always_has_the_network_and_describes_itself() -> None:
    assert SandboxPolicy.of("danger-full-access").network
    assert SandboxPolicy(network_access=True).describe() == "workspace-write+network"
    assert SandboxPolicy.of("read-only").describe() == "read-only"

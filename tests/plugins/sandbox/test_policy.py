"""How a sandbox is spelled (issue 24 §2): a mode name, or `{mode, writable_roots,
network_access}`; a bad value is one error naming the accepted modes; writable roots are made
absolute against the workspace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from tether.plugins.sandbox import SandboxMode, SandboxPolicy, SandboxSettings

PATIENCE_S = 60.0


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


def test_settings_made_with_bad_values_fail_where_they_are_made_naming_each() -> None:
    with pytest.raises(ValidationError) as caught:
        SandboxSettings(mode="yolo", writable_roots=("",), max_processes=0)

    assert caught.value.title == "SandboxSettings"
    assert [(error["loc"], error["msg"]) for error in caught.value.errors()] == [
        (
            ("mode",),
            "Value error, unknown sandbox mode 'yolo': use one of read-only, "
            "workspace-write, danger-full-access",
        ),
        (
            ("writable_roots",),
            "Value error, writable_roots: an entry is empty; give a directory path",
        ),
        (
            ("max_processes",),
            "Value error, max_processes 0: give a positive count, or null for none",
        ),
    ]


def test_a_mapping_names_the_nested_field_it_refuses() -> None:
    with pytest.raises(ValidationError) as caught:
        SandboxSettings.model_validate({"env": {"set": {"A=B": "1"}}})

    assert [(error["loc"], error["msg"]) for error in caught.value.errors()] == [
        (("env", "set"), "Value error, 'A=B' is not a variable name (no '=', not empty)")
    ]


def test_settings_remember_which_fields_were_given() -> None:
    settings = SandboxSettings.model_validate({"mode": "read-only", "env": {"include": ["X"]}})

    assert settings.model_fields_set == {"mode", "env"}
    assert settings.model_dump(exclude_unset=True) == {
        "mode": "read-only",
        "env": {"include": ("X",)},
    }
    assert SandboxSettings.model_validate("read-only").model_fields_set == {"mode"}


_WITHOUT_PYDANTIC = """
import sys
from tether.plugins.sandbox import EnvPolicy, SandboxMode, SandboxSettings

made = [
    SandboxSettings(),
    SandboxSettings.model_validate("read-only"),
    SandboxSettings.model_validate(SandboxMode.DANGER_FULL_ACCESS),
    SandboxSettings(
        writable_roots=["build"], network_access=True, env={"include": ["DATABASE_URL"]},
        tmp_size="512M", max_processes=None,
    ),
    SandboxSettings.model_validate({"env": EnvPolicy(inherit="core", set={"CI": "1"})}),
]
print([settings.policy("/w").describe() for settings in made], "pydantic" in sys.modules)
"""


def test_settings_given_plainly_valid_values_are_made_without_importing_pydantic(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_PYDANTIC],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )

    assert (done.returncode, done.stdout) == (
        0,
        "['workspace-write', 'read-only', 'danger-full-access', 'workspace-write+network', "
        "'workspace-write'] False\n",
    ), done.stderr

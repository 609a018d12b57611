"""`ShellConfig`: checked where it is made, with the messages of a config file's, and made without
pydantic validating it from plainly valid values (issue 36: the agent boot hands the shell its
config so)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from tether.plugins.sandbox import SandboxSettings
from tether.plugins.shell import ShellConfig

PATIENCE_S = 60.0


def test_a_config_made_with_bad_values_fails_where_it_is_made_naming_each() -> None:
    with pytest.raises(ValidationError) as caught:
        ShellConfig(timeout_ms=0, grace_ms=2**31, sandbox="yolo")  # type: ignore[arg-type]

    assert caught.value.title == "ShellConfig"
    assert [(error["loc"], error["msg"]) for error in caught.value.errors()] == [
        (("timeout_ms",), "Value error, bash-local: timeout_ms must be a positive finite number"),
        (("grace_ms",), "Value error, bash-local: grace_ms must be no greater than 2147483647"),
        (
            ("sandbox", "mode"),
            "Value error, unknown sandbox mode 'yolo': use one of read-only, "
            "workspace-write, danger-full-access",
        ),
    ]


def test_a_timeout_given_as_an_integer_is_a_float_as_a_config_files() -> None:
    config = ShellConfig(timeout_ms=5000)

    assert (type(config.timeout_ms), config.timeout_ms) == (float, 5000.0)
    assert config == ShellConfig.model_validate({"timeout_ms": 5000})


def test_a_sandbox_mode_name_is_a_whole_sandbox() -> None:
    assert ShellConfig(sandbox="read-only").sandbox == SandboxSettings(mode="read-only")  # type: ignore[arg-type]


_WITHOUT_PYDANTIC = """
from tether.kernel.config_models import _DERIVED
from tether.plugins.sandbox import SandboxSettings
from tether.plugins.shell.config import ShellConfig

config = ShellConfig(
    cwd="/w", timeout_ms=60_000, max_output_bytes=1000, grace_ms=500.0, orphan_ledger_dir="/h/run",
    spill_dir="/h/run/spill", sandbox=SandboxSettings.model_validate("read-only"),
)
print(config.timeout_ms, config.sandbox.mode, sorted(model.__name__ for model in _DERIVED))
"""


def test_a_config_of_plainly_valid_values_is_made_without_pydantic_validating_it(
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

    # (the shell package imports pydantic today through `tether.tools`: no model is built)
    assert (done.returncode, done.stdout) == (0, "60000.0 read-only []\n"), done.stderr

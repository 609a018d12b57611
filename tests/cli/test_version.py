"""`tether --version` names tether's version, from its one source, and the Python running it."""

from __future__ import annotations

import platform
import subprocess
import sys

import tether
from tether.cli.app import main


def test_version_names_tethers_version_and_the_pythons(capsys: object) -> None:
    assert main(["--version"]) == 0

    out = capsys.readouterr().out  # type: ignore[attr-defined]
    expected = f"{platform.python_implementation()} {platform.python_version()}"
    assert out == f"tether {tether.__version__} ({expected})\n"


def test_the_installed_metadata_reads_the_same_version_source() -> None:
    from importlib.metadata import version

    assert version("tether") == tether.__version__


def test_a_commands_version_flag_prints_the_same_line() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from tether.cli.app import run; run()", "run", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert done.stdout.startswith(f"tether {tether.__version__} (")

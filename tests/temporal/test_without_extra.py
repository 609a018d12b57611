"""tether without the `temporal` extra: everything imports, and the Temporal commands say how to
install it (exit 2). Runs a real interpreter in which `import temporalio` fails."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ..patience import PATIENCE_S

SCRIPT = """
import sys
sys.modules["temporalio"] = None  # what an environment without the extra looks like
import tether, tether.temporal, tether.temporal.outcomes, tether.temporal.payloads
from tether.cli.app import main
sys.exit(main(sys.argv[1:]))
"""
MISSING = "tether: the Temporal integration needs the extra: pip install 'tether[temporal]'\n"


@pytest.mark.parametrize(
    "argv",
    [
        ("worker", "--address", "127.0.0.1:1"),
        ("run", "--temporal", "127.0.0.1:1", "a task"),
        ("chat", "--temporal", "127.0.0.1:1"),
    ],
    ids=["worker", "run", "chat"],
)
def test_tether_imports_without_temporalio_and_the_temporal_commands_name_the_extra(
    argv: tuple[str, ...],
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *argv],
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )
    assert (done.returncode, done.stderr) == (2, MISSING)

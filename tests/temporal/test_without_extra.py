"""tether without the `temporal` extra: everything imports, and the Temporal commands say how to
install it (exit 2). Runs a real interpreter in which `import temporalio` fails."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
sys.modules["temporalio"] = None  # what an environment without the extra looks like
import tether, tether.temporal, tether.temporal.outcomes, tether.temporal.payloads
from tether.cli.app import main
sys.exit(main(["worker", "--address", "127.0.0.1:1"]))
"""


def test_tether_imports_without_temporalio_and_the_worker_command_names_the_extra() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stderr) == (
        2,
        "tether: the Temporal integration needs the extra: pip install 'tether[temporal]'\n",
    )

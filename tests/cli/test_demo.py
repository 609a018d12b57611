"""`tether demo` — the README's main command — runs a real agent turn against the scripted local
model and shows each outcome the runtime distinguishes, then a clean `sessions check`."""

import subprocess
import sys
from pathlib import Path

import pytest

from ..patience import PATIENCE_S

TETHER = Path(sys.executable).with_name("tether")


@pytest.mark.slow
def test_the_demo_shows_every_outcome_and_a_balanced_log(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(TETHER), "demo", "--workspace", str(tmp_path / "demo")],
        check=False,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "COLUMNS": "200"},
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr + out
    assert "✗ release_lookup TOOL_TIMEOUT" in out
    assert "✗ bash ABORTED" in out
    assert "✗ read ABORTED_BEFORE_DISPATCH" in out
    assert "its process group is gone" in out
    assert ": ok" in out

"""docs/library.md runs as written: each ```python block is a complete program, executed here in
its own interpreter against the scripted model (real HTTP on 127.0.0.1, no network, no key).

Blocks marked ```py are sketches (the other libraries' programs) and are not run. A block
passes when its process exits 0: its own `assert`s say what it must show. Each runs in a fresh
temporary directory with HOME and TETHER_HOME inside it, so no user configuration leaks in.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .patience import PATIENCE_S

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "library.md"
_BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str]]:
    """(the nearest heading above it, the code) for every runnable block, in order."""
    text = GUIDE.read_text(encoding="utf-8")
    out: list[tuple[str, str]] = []
    for found in _BLOCK.finditer(text):
        headings = re.findall(r"^#+ (.+)$", text[: found.start()], re.MULTILINE)
        out.append((headings[-1] if headings else "top", found["code"]))
    return out


def test_the_guide_has_an_example_for_each_section() -> None:
    assert len(blocks()) >= 8


@pytest.mark.parametrize(("section", "code"), blocks(), ids=[h for h, _ in blocks()])
def test_the_example_runs(section: str, code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "HOME": str(tmp_path), "TETHER_HOME": str(tmp_path / "tether-home")}
    env.pop("PYTHONWARNINGS", None)
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )
    assert done.returncode == 0, f"{section}:\n{done.stdout}\n{done.stderr}"

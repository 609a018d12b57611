"""The tool runtime's typed event keys (tools/events.py, issue 38).

`tools.PRE_EXECUTE` and the others are the contract's event names (§4.5) as `EventKey`s: they
register and dispatch exactly as the plain strings do, and mypy --strict rejects a listener whose
signature does not fit its key (tests/typecheck/event_keys.py, run here as a subprocess).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tether import tools
from tether.kernel import Context

from ..patience import PATIENCE_S

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ROOT / "tests" / "typecheck" / "event_keys.py"
_EXPECT = re.compile(r"#\s*expect:.*mypy\[(?P<code>[\w-]+)\]")
_ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+): error: .*\[(?P<code>[\w-]+)\]$")


def test_the_keys_carry_the_contract_event_names() -> None:
    assert [
        tools.PRE_EXECUTE.name,
        tools.EXECUTE.name,
        tools.POST_EXECUTE.name,
        tools.RESULT.name,
        tools.CHANGE.name,
    ] == [
        "tools/pre-execute",
        "tools/execute",
        "tools/post-execute",
        "tools/result",
        "tools/change",
    ]


def test_a_listener_registered_by_key_is_the_listener_of_the_string_name() -> None:
    ctx = Context()

    def changed() -> None:
        pass

    ctx.on(tools.CHANGE, changed)
    assert ctx.listeners("tools/change") == (changed,)


def test_mypy_strict_rejects_exactly_the_listeners_that_do_not_fit_their_key() -> None:
    expected: Counter[tuple[int, str]] = Counter()
    for number, line in enumerate(CHECKED.read_text(encoding="utf-8").splitlines(), start=1):
        found = _EXPECT.search(line)
        if found is not None:
            expected[(number, found["code"])] += 1
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(CHECKED)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )
    assert done.returncode in (0, 1), f"mypy crashed:\n{done.stdout}\n{done.stderr}"
    errors: Counter[tuple[int, str]] = Counter()
    for line in done.stdout.splitlines():
        found = _ERROR.match(line)
        if found is not None:
            errors[(int(found["line"]), found["code"])] += 1
    assert len(expected) == 4
    assert errors == expected, done.stdout

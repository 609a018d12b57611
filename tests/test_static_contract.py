"""The static contract of CONTRACT §4.1, checked by the type checkers themselves.

`tests/typecheck/contract_ok.py` holds the allowed uses (a `tools/execute` listener typed
`ToolDispatchExecution` replaces the signal; a body typed `ToolRunContext` sees exactly an
`AbortSignal`): mypy --strict and pyright (strict) report nothing for it.
`tests/typecheck/contract_errors.py` holds each forbidden use on its own line, marked
`# expect: mypy[<code>] pyright[<rule>]`: each checker reports exactly the marked errors on
exactly the marked lines, and nothing else (deleting the signal is a pyright-only error).

Both checkers run once per module, concurrently, as subprocesses. Pyright's PyPI wrapper may need
to fetch its node package on first use; when pyright cannot run at all, only its tests skip.
Pyright resolves imports through this interpreter (`--pythonpath`), not whatever `python` is on
PATH.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from .patience import PATIENCE_S

ROOT = Path(__file__).resolve().parents[1]
OK_FILE = ROOT / "tests" / "typecheck" / "contract_ok.py"
ERRORS_FILE = ROOT / "tests" / "typecheck" / "contract_errors.py"
FILES = [str(OK_FILE.relative_to(ROOT)), str(ERRORS_FILE.relative_to(ROOT))]

Diagnostic = tuple[str, int, str]  # (file name, 1-based line, mypy code or pyright rule)

_EXPECT = re.compile(r"#\s*expect:(?P<marks>.*)$")
_MARK = re.compile(r"(?P<tool>mypy|pyright)\[(?P<code>[\w-]+)\]")
_MYPY_ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+): error: .*\[(?P<code>[\w-]+)\]$")


def expected(tool: str) -> Counter[Diagnostic]:
    """The errors `contract_errors.py` marks for `tool`."""
    marked: Counter[Diagnostic] = Counter()
    lines = ERRORS_FILE.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        found = _EXPECT.search(line)
        if found is None:
            continue
        for mark in _MARK.finditer(found["marks"]):
            if mark["tool"] == tool:
                marked[(ERRORS_FILE.name, number, mark["code"])] += 1
    return marked


def _pyright_command() -> list[str] | None:
    local = Path(sys.executable).with_name("pyright")
    if local.exists():
        return [str(local)]
    found = shutil.which("pyright")
    return None if found is None else [found]


@pytest.fixture(scope="module")
def checkers() -> Iterator[dict[str, subprocess.Popen[str] | None]]:
    """Start mypy and pyright on both files, concurrently; wait for them on teardown."""
    started: dict[str, subprocess.Popen[str] | None] = {
        "mypy": subprocess.Popen(
            [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", *FILES],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    }
    pyright = _pyright_command()
    started["pyright"] = (
        None
        if pyright is None
        else subprocess.Popen(
            [*pyright, "--outputjson", "--pythonpath", sys.executable, *FILES],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    )
    try:
        yield started
    finally:
        for process in started.values():
            if process is not None and process.poll() is None:
                process.kill()
            if process is not None:
                process.communicate()


@pytest.fixture(scope="module")
def mypy_errors(checkers: dict[str, subprocess.Popen[str] | None]) -> Counter[Diagnostic]:
    process = checkers["mypy"]
    assert process is not None
    stdout, stderr = process.communicate(timeout=PATIENCE_S)
    assert process.returncode in (0, 1), f"mypy crashed:\n{stdout}\n{stderr}"
    errors: Counter[Diagnostic] = Counter()
    for line in stdout.splitlines():
        found = _MYPY_ERROR.match(line)
        if found is not None:
            errors[(Path(found["file"]).name, int(found["line"]), found["code"])] += 1
        else:
            assert ": note: " in line, f"unexpected mypy output line: {line!r}"
    return errors


@pytest.fixture(scope="module")
def pyright_errors(checkers: dict[str, subprocess.Popen[str] | None]) -> Counter[Diagnostic]:
    process = checkers["pyright"]
    if process is None:
        pytest.skip("pyright is not installed in this environment")
    stdout, stderr = process.communicate(timeout=PATIENCE_S)
    try:
        report = json.loads(stdout)
    except json.JSONDecodeError:
        tail = (stderr or stdout).strip().splitlines()[-3:]
        pytest.skip(f"pyright could not run (exit {process.returncode}): {' | '.join(tail)}")
    errors: Counter[Diagnostic] = Counter()
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] == "error":
            line = diagnostic["range"]["start"]["line"] + 1
            errors[(Path(diagnostic["file"]).name, line, diagnostic.get("rule", ""))] += 1
    return errors


def test_the_error_file_marks_every_forbidden_use() -> None:
    assert sum(expected("mypy").values()) == 5
    assert sum(expected("pyright").values()) == 6


def test_mypy_accepts_every_allowed_use(mypy_errors: Counter[Diagnostic]) -> None:
    assert [error for error in mypy_errors if error[0] != ERRORS_FILE.name] == []


def test_mypy_reports_exactly_the_marked_errors(mypy_errors: Counter[Diagnostic]) -> None:
    assert mypy_errors == expected("mypy")


def test_pyright_accepts_every_allowed_use(pyright_errors: Counter[Diagnostic]) -> None:
    assert [error for error in pyright_errors if error[0] != ERRORS_FILE.name] == []


def test_pyright_reports_exactly_the_marked_errors(pyright_errors: Counter[Diagnostic]) -> None:
    assert pyright_errors == expected("pyright")

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from ._support import Lab, lab

if importlib.util.find_spec("pydantic_monty") is None:  # tether without the code-mode extra
    collect_ignore = [
        "test_crash_repair.py",
        "test_dispatch_log.py",
        "test_run_code.py",
        "test_sandbox.py",
    ]

MakeLab = Callable[..., Awaitable[Lab]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
async def make_lab(project: Path) -> AsyncIterator[MakeLab]:
    """`await make_lab(**options)`: a mounted `Lab`, disposed after the test."""
    made: list[Lab] = []

    async def make(**options: Any) -> Lab:
        found = await lab(project, **options)
        made.append(found)
        return found

    yield make
    for found in made:
        await found.ctx.dispose()

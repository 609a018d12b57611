from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from ._support import Lab, lab

pytest.importorskip("pydantic_monty")

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

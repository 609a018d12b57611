from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tether.testing.scripted_model import ScriptedModelServer

from ._support import Rig, Router


@pytest.fixture
def router() -> Router:
    return Router()


@pytest.fixture
async def server(router: Router) -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer(fallback=router) as scripted:
        yield scripted


@pytest.fixture
async def rig(tmp_path: Path, server: ScriptedModelServer, router: Router) -> AsyncIterator[Rig]:
    built = await Rig.start(tmp_path, server, router)
    try:
        yield built
    finally:
        await built.aclose()

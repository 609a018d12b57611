"""The `box` fixture: a real sandboxed command's workspace, home and outside, once as this user
and once as an unprivileged one (`_jail.py`, `tests/users.py`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ...users import USERS
from ._jail import Box, boxes


@pytest.fixture(params=USERS)
def box(request: pytest.FixtureRequest) -> Iterator[Box]:
    yield from boxes(request.param)

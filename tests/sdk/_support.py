"""Helpers of the Claude Agent SDK tests: waiting for a command tether started."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

import psutil

from ..cli._support import PATIENCE_S, process_running


async def started(argv: Sequence[str], root: int | None = None) -> psutil.Process:
    """The process with exactly `argv` under `root` (default: this test), once it runs."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE_S
    while (found := process_running(os.getpid() if root is None else root, argv)) is None:
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {PATIENCE_S} s waiting for {list(argv)}")
        await asyncio.sleep(0.01)
    return found

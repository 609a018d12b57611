"""The line `tether --version` prints (here, not in `tether.cli.app`, so the argparse front of
`run` and `chat` can print it without importing the command table that imports them)."""

from __future__ import annotations

import sys

__all__ = ["version_text"]


def version_text() -> str:
    """What `tether --version` prints: tether's version and the Python running it, e.g.
    `tether 0.1.0 (CPython 3.11.7)`. The version is `tether.__version__`, its one source."""
    from .. import __version__

    name = sys.implementation.name  # not `platform`: it imports `re`, 10 ms for one word
    python = {"cpython": "CPython", "pypy": "PyPy"}.get(name, name)
    return f"tether {__version__} ({python} {sys.version.split()[0]})"

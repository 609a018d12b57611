"""`renamed_keywords`: a public function's parameter renamed, its old keyword kept for a release.

Owns the one wrapper that turns a call with an old keyword (`exec=`, `next=`: names that shadow
builtins) into a call with the new one, with a `DeprecationWarning` naming both. Does not own
which parameters are renamed (each function says so where it is defined). The wrapper costs a
call frame, so it is for functions off the per-call hot path; a listener the kernel calls
positionally needs no wrapper (its parameters are never passed by keyword).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["renamed_keywords"]

P = ParamSpec("P")
R = TypeVar("R")


def renamed_keywords(**renames: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """`@renamed_keywords(exec="call")`: `f(exec=x)` still calls `f(call=x)`, warning once per
    call site (Python's default filter) that `exec` is deprecated; passing both is a TypeError."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        where = getattr(fn, "__qualname__", repr(fn))

        @functools.wraps(fn)
        def renamed(*args: P.args, **kwargs: P.kwargs) -> R:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{where}() got both {old!r} and {new!r}; pass {new!r}")
                    warnings.warn(
                        f"{where}(): the keyword {old!r} is deprecated (it shadows a builtin);"
                        f" pass {new!r} instead",
                        DeprecationWarning,
                        stacklevel=2,
                    )
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return renamed

    return wrap

"""Names a module hands on but imports only when first asked for (PEP 562).

Owns `lazy_names`: the module-level `__getattr__` and `__dir__` of a module whose public names
live in other modules that a boot need not import (issue 36: what only a later call uses is
imported at its first use). The module lists each such name with the module that defines it
(relative to its package, or absolute), keeps the imports under `TYPE_CHECKING` for type
checkers, and writes

    __getattr__, __dir__ = lazy_names(globals(), {"Name": ".records", ...})

The first access imports the defining module and keeps the value in the module's namespace, so
every later access is a plain global lookup. Does not own which names are lazy (each module
says) nor any import machinery: a plain `import_module` at the first access.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `tether --help` imports this module
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["lazy_names"]


def lazy_names(
    namespace: dict[str, object], sources: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`(__getattr__, __dir__)` for the module whose `globals()` is `namespace`: each name in
    `sources` is imported from its module (`".records"`, `"tether.tools"`) at its first use; any
    other name raises `AttributeError` as a module's would."""
    module = str(namespace["__name__"])
    package = str(namespace.get("__package__") or module)

    def get(name: str) -> object:
        source = sources.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value: object = getattr(import_module(source, package), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted({*namespace, *sources})

    return get, names

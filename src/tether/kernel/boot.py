"""Boot: resolve configured plugin names and mount them on a context.

Owns: name resolution (an entry point in group `tether.plugins` first, then a dotted path: `pkg.mod`
is the module, `pkg.mod:attr` an attribute of it; a builtin is its caller's own dotted path, so a
boot without configured plugins never scans the installed entry points, ~10 ms), the order of a boot
(builtins first, then config entries; a config id replaces a builtin with the same id in place;
disabled entries skipped), checking every plugin and its config before anything is mounted, and
failing with one `ConfigError` line after disposing whatever it mounted (a plugin that raises
`ConfigError` itself — a file it reads is wrong — keeps its own line, which names the file). Does
not own: the file format (config.py) or mounting itself (context.py).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from .config import PluginEntry, TetherConfig
from .context import Context
from .errors import ConfigError, InvalidPluginConfig, PluginError
from .lifecycle import PluginHandle, PluginState
from .plugins import describe_plugin, validate_config

if TYPE_CHECKING:
    import importlib.metadata  # imported where entry points are scanned: it costs ~5 ms

__all__ = ["ENTRY_POINT_GROUP", "boot", "plugin_entry_points", "resolve_plugin"]

ENTRY_POINT_GROUP: Final = "tether.plugins"


def plugin_entry_points() -> list[importlib.metadata.EntryPoint]:
    """The installed entry points of group `tether.plugins` (scanning them costs ~10 ms; a boot
    scans once and passes the list to `resolve_plugin`)."""
    import importlib.metadata

    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def resolve_plugin(
    name: str, *, entry_points: Sequence[importlib.metadata.EntryPoint] | None = None
) -> object:
    """The plugin object `name` refers to. Raises ConfigError (one line) when it cannot.
    `entry_points` is `plugin_entry_points()` (scanned here when not given)."""
    found_points = plugin_entry_points() if entry_points is None else entry_points
    for entry_point in found_points:
        if entry_point.name == name:
            try:
                return entry_point.load()
            except Exception as error:
                problem = f'entry point "{entry_point.value}" failed to load: {_say(error)}'
                raise ConfigError(f'plugin "{name}": {problem}') from error
    module_name, _, attribute = name.partition(":")
    try:
        found: object = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if module_name != missing and not module_name.startswith(missing + "."):
            raise ConfigError(
                f'plugin "{name}": importing "{module_name}" failed: {_say(error)}'
            ) from error
        raise ConfigError(
            f'unknown plugin "{name}" (not an entry point in group "{ENTRY_POINT_GROUP}"'
            " nor an importable module)"
        ) from None
    except (ValueError, TypeError):  # empty or relative module names
        raise ConfigError(
            f'unknown plugin "{name}" (not an entry point in group "{ENTRY_POINT_GROUP}"'
            " nor an importable module)"
        ) from None
    except Exception as error:
        raise ConfigError(
            f'plugin "{name}": importing "{module_name}" failed: {_say(error)}'
        ) from error
    for part in attribute.split(".") if attribute else ():
        try:
            found = getattr(found, part)
        except AttributeError:
            raise ConfigError(
                f'plugin "{name}": module "{module_name}" has no attribute "{attribute}"'
            ) from None
    return found


async def boot(
    ctx: Context, config: TetherConfig, *, builtins: Sequence[PluginEntry] = ()
) -> list[PluginHandle]:
    """Mount `builtins` then the configured plugins on `ctx`; their handles in mount order.

    Raises ConfigError when a name does not resolve, a config is invalid, a plugin fails to
    apply, or a plugin still waits for a service nobody provides; everything boot mounted is
    disposed (LIFO) before it raises.
    """
    points: list[importlib.metadata.EntryPoint] | None = None

    def prepare(entry: PluginEntry, builtin: bool) -> object:
        nonlocal points
        if entry.plugin is not None or builtin:  # a builtin names its own module
            return _prepare(entry, ())
        if points is None:
            points = plugin_entry_points()
        return _prepare(entry, points)

    planned = [
        (entry, prepare(entry, builtin))
        for entry, builtin in _layer(builtins, config)
        if not entry.disabled
    ]
    mounted: list[tuple[PluginEntry, PluginHandle]] = []
    try:
        for entry, plugin in planned:
            try:
                mounted.append((entry, await ctx.plugin(plugin, entry.settings)))
            except ConfigError:
                raise  # a file the plugin reads is wrong: its line already names the file
            except PluginError as error:
                raise ConfigError(f"{entry.label}: {error}") from error
            except Exception as error:
                raise ConfigError(
                    f'{entry.label}: plugin "{entry.name}" failed to apply: {_say(error)}'
                ) from error
        _check_complete(mounted)
    except BaseException:
        for _, handle in reversed(mounted):
            await handle.dispose()
        raise
    return [handle for _, handle in mounted]


def _layer(builtins: Sequence[PluginEntry], config: TetherConfig) -> list[tuple[PluginEntry, bool]]:
    """The entries in mount order, each with whether it is a builtin (not replaced by config)."""
    merged: dict[str, tuple[PluginEntry, bool]] = {}
    for index, entry in enumerate(builtins):
        origin = entry.origin or f"builtins[{index}]"
        if entry.key in merged:
            raise ConfigError(f'{origin}: duplicate id "{entry.key}" among the builtin plugins')
        merged[entry.key] = (replace(entry, origin=origin), True)
    for entry in config.plugins:
        merged[entry.key] = (entry, False)
    return list(merged.values())


def _prepare(entry: PluginEntry, points: Sequence[importlib.metadata.EntryPoint] | None) -> object:
    try:
        plugin = (
            entry.plugin
            if entry.plugin is not None
            else resolve_plugin(entry.name, entry_points=points)
        )
        if entry.value is not None and entry.config:
            raise ConfigError("give the plugin its config or its value, not both")
        validate_config(describe_plugin(plugin), entry.settings)
    except InvalidPluginConfig as error:
        raise ConfigError(f"{entry.label}: {error.detail}") from error
    except (ConfigError, PluginError) as error:
        raise ConfigError(f"{entry.label}: {error}") from error
    return plugin


def _check_complete(mounted: list[tuple[PluginEntry, PluginHandle]]) -> None:
    for entry, handle in mounted:
        if handle.state is PluginState.FAILED:
            raise ConfigError(
                f'{entry.label}: plugin "{handle.name}" failed to apply: {_say(handle.error)}'
            )
        if missing := handle.missing:
            needs = ", ".join(f'"{name}"' for name in missing)
            noun = "service" if len(missing) == 1 else "services"
            raise ConfigError(
                f'plugin "{handle.name}" needs {noun} {needs}, which no configured plugin provides'
            )


def _say(error: BaseException | None) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__

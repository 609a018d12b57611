"""What a plugin is: the plugin shapes, the `Service` base class and config validation.

A plugin is either
  * a module or object with `name: str`, optional `inject: Sequence[str]` (services it needs),
    optional `Config` (a pydantic model, a `ConfigValue` or a dataclass: config_models.py) and
    `apply(ctx, config)` or `apply(ctx)`, sync or async; or
  * a `Service` subclass: constructed as `cls(ctx, config)`, `await start()`ed, then provided as
    a service under its `name`; on dispose it is withdrawn first and then `await stop()`ed.

Owns: reading those attributes once into a `PluginSpec` (with one clear PluginError when the
shape is wrong) and turning a config into the plugin's `Config` (config_models.py: pydantic is
imported only when a mapping must be validated). Does not own: mounting, deferral or disposal
(lifecycle.py, context.py).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, ClassVar

from .config_models import is_config_model, make_config
from .errors import InvalidPluginConfig, PluginError

if TYPE_CHECKING:
    from .context import Context

__all__ = ["PluginSpec", "Service", "describe_plugin", "validate_config"]


class Service:
    """Base class of service plugins: `name` is both the plugin and the service name.

    Subclasses set `name`, optionally `inject` and a nested `Config` (a pydantic model, a
    `ConfigValue` or a dataclass), and
    override `start`/`stop` when they hold resources. `ctx` is the plugin's own context:
    registrations made through it are undone when the service is disposed.
    """

    name: ClassVar[str]
    inject: ClassVar[Sequence[str]] = ()

    def __init__(self, ctx: Context, config: object = None) -> None:
        self.ctx = ctx
        self.config = config

    async def start(self) -> None:
        """Called once after construction, before the service is provided."""

    async def stop(self) -> None:
        """Called once on dispose, after the service has been withdrawn."""


@dataclass(frozen=True, slots=True)
class PluginSpec:
    """A plugin's attributes, read once at mount."""

    name: str
    inject: tuple[str, ...]
    config_model: type | None  # a pydantic model, a ConfigValue or a dataclass (config_models.py)
    target: object  # the module, object or Service subclass
    call: Callable[..., object]  # its apply, or the Service subclass itself
    is_service: bool
    takes_config: bool  # apply(ctx, config) / cls(ctx, config), rather than apply(ctx) / cls(ctx)


def describe_plugin(plugin: object) -> PluginSpec:
    """Read a plugin's shape. Raises PluginError naming what is missing or malformed."""
    is_service = isinstance(plugin, type) and issubclass(plugin, Service)
    name = getattr(plugin, "name", None)
    if not isinstance(name, str) or not name:
        raise PluginError(
            f"{_display(plugin)} is not a plugin: it needs a non-empty `name` string and an"
            " `apply(ctx, config)` function, or must subclass tether.kernel.Service"
        )
    call = plugin if is_service else getattr(plugin, "apply", None)
    if not callable(call):
        raise PluginError(
            f'plugin "{name}" has no apply(ctx, config) function; define one, or subclass'
            " tether.kernel.Service"
        )
    inject = getattr(plugin, "inject", ())
    if isinstance(inject, str) or not isinstance(inject, Sequence):
        raise PluginError(
            f'plugin "{name}": inject must be a list of service names, got {inject!r}'
        )
    if not all(isinstance(each, str) and each for each in inject):
        raise PluginError(f'plugin "{name}": inject must hold service names, got {list(inject)!r}')
    model = getattr(plugin, "Config", None)
    if model is not None and not is_config_model(model):
        raise PluginError(
            f'plugin "{name}": Config must be a pydantic BaseModel subclass, a'
            " tether.kernel.config_models.ConfigValue subclass or a dataclass"
        )
    takes_config = _accepts_two(call)
    if model is not None and not takes_config:
        raise PluginError(
            f'plugin "{name}" declares a Config model, so apply must accept (ctx, config)'
        )
    return PluginSpec(name, tuple(inject), model, plugin, call, is_service, takes_config)


def validate_config(spec: PluginSpec, config: Mapping[str, object] | object = None) -> object:
    """The plugin's `Config` instance (None without a model): `config` is a mapping to validate
    or already an instance of the `Config`, handed on as is. Raises InvalidPluginConfig."""
    if spec.config_model is None:
        if isinstance(config, Mapping) and config:
            keys = ", ".join(f'"{key}"' for key in config)
            raise InvalidPluginConfig(
                spec.name,
                f"config: this plugin takes no config (it has no Config model), got {keys}",
            )
        if config is not None and not isinstance(config, Mapping):
            raise InvalidPluginConfig(
                spec.name,
                "config: this plugin takes no config (it has no Config model),"
                f" got {type(config).__name__}",
            )
        return None
    return make_config(spec.name, spec.config_model, config)


def _accepts_two(call: Callable[..., object]) -> bool:
    try:
        signature = inspect.signature(call)
    except (TypeError, ValueError):  # builtins without a signature: assume the documented form
        return True
    try:
        signature.bind(None, None)
    except TypeError:
        return False
    return True


def _display(plugin: object) -> str:
    if isinstance(plugin, ModuleType):
        return f'module "{plugin.__name__}"'
    if isinstance(plugin, type):
        return f'class "{plugin.__module__}.{plugin.__qualname__}"'
    shown = repr(plugin)
    return shown if len(shown) <= 60 else shown[:59] + "…"

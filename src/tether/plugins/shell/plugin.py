"""The `shell` plugin: provides `ctx.shell`, a `LocalBashExecutor` configured by `ShellConfig`.

Mount: `await ctx.plugin(tether.plugins.shell.plugin, {"timeout_ms": 60000})` (entry point
`shell`). Disposing the plugin first withdraws `ctx.shell` (plugins that inject it are disposed
with it), then kills and awaits every process the executor started, background ones included.
"""

from __future__ import annotations

from typing import Final

from ...kernel import Context
from ...kernel.warm_up import WARM_UP_EVENT
from .config import ShellConfig
from .local import LocalBashExecutor

__all__ = ["Config", "apply", "inject", "name"]

name: Final = "shell"
inject: Final[tuple[str, ...]] = ()
Config = ShellConfig


def apply(ctx: Context, config: ShellConfig) -> None:
    """Provide `ctx.shell`; its processes are killed when the plugin is disposed."""
    executor = LocalBashExecutor(config)
    ctx.effect(executor.aclose)  # recorded first, so it runs after `shell` is withdrawn
    ctx.on(WARM_UP_EVENT, executor.warm_up)  # the start-up sweep, once the agent waits
    ctx.provide("shell", executor)

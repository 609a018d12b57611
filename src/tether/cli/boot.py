"""Boot for the command line: the built-in plugin set, layered with `$TETHER_HOME/config.yml` and
the project's `tether.yml` (or `--config`), mounted on a fresh root `Context`.

Owns: which plugins a bare `tether` has (`BUILTINS`) and turning a bad config into one line on
stderr. The library never reads config files; only this boot path does.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

from ..kernel import Context, PluginEntry, boot, default_config_paths, load_config
from ..tools import ToolRuntime

__all__ = ["BUILTINS", "BUILTIN_CONFIG", "builtin_entries", "start"]

BUILTINS: tuple[tuple[str, str], ...] = (
    ("timeout-policy", "tether.plugins.timeout_policy"),
    ("shell", "tether.plugins.shell.plugin"),
    ("jobs", "tether.plugins.jobs.plugin"),
    ("bash", "tether.plugins.shell.bash"),
    ("fs", "tether.plugins.fs.plugin"),
    ("search-tools", "tether.plugins.search.tools"),
    ("todo", "tether.plugins.todo.tool"),
    ("web", "tether.plugins.web.service:WebService"),
    ("web-fetch-http", "tether.plugins.web.fetch_http"),
    ("web-search-exa", "tether.plugins.web.search_exa"),
    ("web-search-brave", "tether.plugins.web.search_brave"),
    ("web-search-tavily", "tether.plugins.web.search_tavily"),
    ("tool-web", "tether.plugins.web.tools"),
    ("llm", "tether.agent.llm.plugin"),
)
"""(id, module) of the default plugin set; entries whose module is absent are skipped."""

BUILTIN_CONFIG: dict[str, dict[str, object]] = {
    "todo": {"allow_parallel_in_progress": False},
}
"""Config the built-ins start from (the `fs` root and such are filled in from `cwd`)."""


def builtin_entries(cwd: Path) -> list[PluginEntry]:
    """The built-in entries that exist in this installation, configured for `cwd`."""
    entries = [PluginEntry(id="tools", name="tools", plugin=ToolRuntime, origin="built-in")]
    for plugin_id, module in BUILTINS:
        if importlib.util.find_spec(module.partition(":")[0]) is None:
            continue
        config = dict(BUILTIN_CONFIG.get(plugin_id, {}))
        if plugin_id == "fs":
            config["root"] = str(cwd)
        entries.append(PluginEntry(id=plugin_id, name=module, config=config, origin="built-in"))
    return entries


async def start(*, cwd: Path, config_paths: Sequence[Path] | None = None) -> Context:
    """A root context with the built-ins and the configured plugins mounted.

    Raises `tether.kernel.ConfigError` (one line) for any bad config.
    """
    paths = list(config_paths) if config_paths is not None else default_config_paths(cwd)
    config = load_config(paths)
    ctx = Context()
    await boot(ctx, config, builtins=builtin_entries(cwd))
    return ctx

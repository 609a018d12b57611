"""Boot for an agent: the built-in plugin set, layered with `$TETHER_HOME/config.yml` and the
project's `tether.yml` (or one given file), mounted on a fresh root `Context`.

Owns: which plugins a bare `tether` has (`BUILTINS`) and how they are configured for a
workspace. The public `Agent` (`tether.agent.api`) and every command line command boot through
here; a plain `Context` never reads config files, only this boot path does.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeAlias

from ..kernel import (
    ConfigError,
    Context,
    PluginEntry,
    TetherConfig,
    boot,
    default_config_paths,
    load_config,
    tether_home,
)
from ..kernel.boot import resolve_plugin
from ..kernel.errors import describe_validation_error
from ..kernel.plugins import describe_plugin
from ..kernel.warm_up import WARM_UP_EVENT
from ..plugins.sandbox.policy import SandboxMode, SandboxPolicy, SandboxSettings
from ..tools import ToolRuntime

__all__ = [
    "AGENT_ONLY",
    "BUILTINS",
    "BUILTIN_CONFIG",
    "SandboxChoice",
    "builtin_entries",
    "sandbox_settings",
    "start",
]

SandboxChoice: TypeAlias = SandboxPolicy | SandboxMode | str
"""A sandbox for the command line's `--sandbox` or `Agent(sandbox=...)`: a mode (or its name)
keeps the configured `writable_roots` and `network_access`; a policy replaces them too (the
configured environment policy, `env`, stays in both cases)."""

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
    ("hooks-claude-code", "tether.plugins.hooks.claude_code"),
    ("permissions", "tether.plugins.permissions.plugin:Permissions"),
    ("approval", "tether.plugins.approval.service:Approval"),
    ("code-mode", "tether.plugins.code_mode.plugin"),
    ("spill-policy", "tether.plugins.spill.policy"),
    ("llm", "tether.agent.llm.plugin"),
    ("subagents", "tether.agent.subagents.plugin"),
    ("mcp", "tether.plugins.mcp"),
)
"""(id, module) of the default plugin set; entries whose module is absent are skipped."""

AGENT_ONLY: frozenset[str] = frozenset({"permissions", "llm", "subagents", "spill-policy"})
"""Built-ins mounted only where a model drives the tools (`tether run` and `tether chat`, alike:
deny rules hold and asks are answered — by the user in `chat`, refused in `run`; and the model
itself, and the `task` tool, whose children need a calling agent loop; and the spill policy,
which keeps big results out of the model's context and stores them beside the session — a
session only an agent has). `tether tools call` is
the user running one tool by hand, so it gets them only when a config file adds them (and
`tether tools list` does not pay for importing the model client)."""

BUILTIN_CONFIG: dict[str, dict[str, object]] = {
    "todo": {"allow_parallel_in_progress": False},
}
"""Config the built-ins start from (the `fs` root and such are filled in from `cwd`)."""

_AS_VALUES: frozenset[str] = frozenset(
    {"shell", "fs", "todo", "hooks-claude-code", "permissions", "llm", "subagents", "mcp"}
)
"""Built-ins handed their config as a value (`PluginEntry.value`): their `Config` made here from
the plain values above, which it takes without validating, so a default boot imports no pydantic
for them (issue 36). With an override the mapping is validated, as a config file's is."""

_CORE: frozenset[str] = frozenset({"tools", "timeout-policy"})
"""What `start(builtins=False)` keeps: the registry, and the policy that enforces `timeout_ms`."""

_WORKSPACE_KEYS: dict[str, str] = {
    "shell": "cwd",  # commands run in the workspace, which the sandbox keeps writable
    "fs": "root",
    "hooks-claude-code": "project_dir",
    "permissions": "workspace",
    "mcp": "project_dir",
    "subagents": "project_dir",
}


def sandbox_settings(config: TetherConfig, choice: SandboxChoice | None = None) -> SandboxSettings:
    """The shell's sandbox: the default (`workspace-write`), then each config file's `sandbox:`
    (a later file's keys win), then `choice`. Raises `ConfigError` naming the file for a bad
    value, `ValueError` for a bad `choice`."""
    merged: dict[str, object] = {}
    for origin, value in config.sandbox:
        from pydantic import ValidationError  # a file names a sandbox

        try:
            settings = SandboxSettings.model_validate(value)
        except ValidationError as error:
            raise ConfigError(f"{origin}: sandbox: {describe_validation_error(error)}") from error
        merged.update(settings.model_dump(exclude_unset=True))
    if isinstance(choice, SandboxPolicy):
        merged = {
            "mode": choice.mode.value,
            "writable_roots": choice.writable_roots,
            "network_access": choice.network_access,
            **({"env": merged["env"]} if "env" in merged else {}),
            "tmp_size": choice.bounds.tmp_size,
            "max_processes": choice.bounds.max_processes,
        }
    elif choice is not None:
        merged["mode"] = SandboxSettings.model_validate(choice).mode
    return SandboxSettings.model_validate(merged)


def builtin_entries(
    cwd: Path,
    *,
    agent: bool = False,
    keep_spill_files: bool = False,
    home: Path | None = None,
    sandbox: SandboxSettings | None = None,
    overrides: Mapping[str, Mapping[str, object]] | None = None,
) -> list[PluginEntry]:
    """The built-in entries that exist in this installation, configured for `cwd`; `agent` adds
    the ones that police a model's calls (`AGENT_ONLY`); `keep_spill_files` is the shell's (for a
    command that prints a result and exits); `home` is the tether home (default `tether_home()`)
    whose `run/` holds the shell's orphan ledger and `run/spill/` a truncated command's full
    output; that and `sessions/` (where the spill policy keeps big results) the file tools may
    read, never write, although they are outside the workspace: the notices tell the model to
    `read` them. `sandbox` is the shell's (default: its own, `workspace-write` in `cwd`).
    `overrides` (plugin id → config) go over a built-in's config, a list extending the
    built-in's (`tether.agent.claude_options`: `--add-dir`, `--settings`, `--mcp-config`); a
    config file that configures the plugin itself replaces them with the rest of its entry.
    `TETHER_TOOLS_MODE` (native | code | both) is the registry's presentation mode."""
    mode = os.environ.get("TETHER_TOOLS_MODE", "").strip()
    entries = [
        PluginEntry(
            id="tools",
            name="tools",
            plugin=ToolRuntime,
            config={"mode": mode} if mode else {},
            origin="built-in",
        )
    ]
    base = home or tether_home()
    shell_spill = base / "run" / "spill"  # a truncated command's full output, until it closes
    for plugin_id, module in BUILTINS:
        if plugin_id in AGENT_ONLY and not agent:
            continue
        if importlib.util.find_spec(module.partition(":")[0]) is None:
            continue
        config = dict(BUILTIN_CONFIG.get(plugin_id, {}))
        if (key := _WORKSPACE_KEYS.get(plugin_id)) is not None:
            config[key] = str(cwd)
        if plugin_id == "fs":  # the `read` a spill notice or a truncated output suggests works
            config["readable"] = [str(base / "sessions"), str(shell_spill)]
        if plugin_id == "shell":  # the next tether stops groups a killed one left behind
            config["orphan_ledger_dir"] = str(base / "run")
            if keep_spill_files:  # printed paths outlive the command: the system's temp dir
                config["keep_spill_files"] = True
            else:
                config["spill_dir"] = str(shell_spill)
            if sandbox is not None:
                config["sandbox"] = sandbox
        if overrides is not None and plugin_id in overrides:
            config = _merged(config, overrides[plugin_id])
        elif plugin_id in _AS_VALUES:
            entries.append(_value_entry(plugin_id, module, config))
            continue
        entries.append(PluginEntry(id=plugin_id, name=module, config=config, origin="built-in"))
    return entries


async def start(
    *,
    cwd: Path,
    config_paths: Sequence[Path] | None = None,
    agent: bool = False,
    keep_spill_files: bool = False,
    home: Path | None = None,
    builtins: bool = True,
    without: frozenset[str] = frozenset(),
    sandbox: SandboxChoice | None = None,
    added_dirs: Sequence[str] = (),
    overrides: Mapping[str, Mapping[str, object]] | None = None,
) -> Context:
    """A root context with the built-ins and the configured plugins mounted. `config_paths`
    default to `home/config.yml` then `cwd/tether.yml` (`home` defaults to `tether_home()`).
    Without `builtins` only the registry and the timeout policy (which enforces the tools'
    `timeout_ms`) are built in; configured plugins are still mounted. `without` names built-ins
    to leave out (the Temporal worker has no in-process agent loop for `subagents`).
    `sandbox` (`--sandbox`, `Agent(sandbox=...)`) overrides the files' `sandbox:`
    (`sandbox_settings`); the result is the shell's, also when a config file reconfigures the
    shell without naming one. `added_dirs` (absolute: `--add-dir`, `additionalDirectories`)
    are writable roots of that sandbox besides its own (a config file's shell entry that names
    its own sandbox keeps it, and then writes there are refused). `overrides` go over the
    built-ins' config (`builtin_entries`).

    Raises `tether.kernel.ConfigError` (one line) for any bad config, `ValueError` for a bad
    `sandbox`.
    """
    if config_paths is not None:
        paths = list(config_paths)
    elif home is not None:
        paths = [home / "config.yml", cwd / "tether.yml"]
    else:
        paths = default_config_paths(cwd)
    ctx = await _start(
        cwd=cwd,
        paths=paths,
        agent=agent,
        keep_spill_files=keep_spill_files,
        home=home,
        builtins=builtins,
        without=without,
        sandbox=sandbox,
        added_dirs=added_dirs,
        overrides=overrides,
    )
    if agent and builtins and "shell" not in without:
        ctx.on(WARM_UP_EVENT, _probe_kernel_meanwhile)
    return ctx


_probe_started = threading.Lock()
"""Held once the kernel probe's thread has been started (once per process)."""


def _probe_kernel_meanwhile() -> None:
    """Start the shell's kernel probe (`kernel_support`: a `bwrap` run, cached for the process)
    in a thread, once per process, at `kernel/warm-up`: the agent's first model response is
    arriving, so the child runs while the model answers and the first command finds the answer
    ready, or waits on the probe's lock. Started with the boot, its imports and its child
    competed with the boot for the interpreter lock and a core: with the shell's sweep, 20-40 ms
    before the first request on two cores (issue 36). A failure is left to the command's own
    call, which probes again and raises as before. The `tools` commands never start it: their
    first command probes (`SubprocessService.support`)."""
    if not _probe_started.acquire(blocking=False):
        return

    def probe() -> None:
        try:
            from ..plugins.sandbox.probe import kernel_support  # in the thread: issue 36

            kernel_support()
        except Exception:
            pass

    threading.Thread(target=probe, name="tether-kernel-probe", daemon=True).start()


async def _start(
    *,
    cwd: Path,
    paths: list[Path],
    agent: bool,
    keep_spill_files: bool,
    home: Path | None,
    builtins: bool,
    without: frozenset[str],
    sandbox: SandboxChoice | None,
    added_dirs: Sequence[str],
    overrides: Mapping[str, Mapping[str, object]] | None,
) -> Context:
    config = load_config(paths)
    settings = sandbox_settings(config, sandbox)
    if added_dirs:
        roots = tuple(dict.fromkeys((*settings.writable_roots, *added_dirs)))
        settings = settings.model_copy(update={"writable_roots": roots})
    config = _with_shell_sandbox(config, settings, forced=sandbox is not None)
    ctx = Context()
    entries = builtin_entries(
        cwd,
        agent=agent,
        keep_spill_files=keep_spill_files,
        home=home,
        sandbox=settings,
        overrides=overrides,
    )
    if not builtins:
        entries = [entry for entry in entries if entry.id in _CORE]
    entries = [entry for entry in entries if entry.id not in without]
    await boot(ctx, config, builtins=entries)
    return ctx


def _value_entry(plugin_id: str, module: str, config: Mapping[str, object]) -> PluginEntry:
    """The built-in entry with its `Config` made from `config` (see `_AS_VALUES`); a module that
    does not load keeps the mapping, so the boot reports it as it reports any plugin."""
    try:
        model = describe_plugin(resolve_plugin(module, entry_points=())).config_model
    except Exception:
        model = None
    if model is None:
        return PluginEntry(id=plugin_id, name=module, config=config, origin="built-in")
    return PluginEntry(id=plugin_id, name=module, value=model(**config), origin="built-in")


def _merged(base: Mapping[str, object], extra: Mapping[str, object]) -> dict[str, object]:
    """`base` with `extra` over it; a list in both is extended, not replaced."""
    merged = dict(base)
    for key, value in extra.items():
        current = merged.get(key)
        if isinstance(current, list) and isinstance(value, list):
            merged[key] = [*current, *value]
        else:
            merged[key] = value
    return merged


def _with_shell_sandbox(
    config: TetherConfig, settings: SandboxSettings, *, forced: bool
) -> TetherConfig:
    """A config file's `shell` entry gets the sandbox when it names none (always when forced)."""
    sandbox = settings.model_dump()
    plugins = tuple(
        replace(entry, config={**entry.config, "sandbox": sandbox})
        if entry.key == "shell" and (forced or "sandbox" not in entry.config)
        else entry
        for entry in config.plugins
    )
    return replace(config, plugins=plugins)

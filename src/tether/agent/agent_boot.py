"""Booting a public `Agent`: from its options (`tether.agent.agent_options`) to its started state
(`tether.agent.agent_state`).

Owns the order of an agent's boot: Claude Code's session options written to scratch files, the
shared boot (`tether.agent.boot.start`: the registry, the timeout policy, the config files, the
built-ins, the sandbox), the agent's own plugins and tools, the permission mode and rules, the
approver, the deny rules and checks, the slow-stop listener, the model, the session store (swept
once per process) and the session (new, or resumed with its grants), and the system prompt with
the instruction files — and, when a step fails, disposing whatever was built. Does not own what
the boot builds (`tether.agent.boot`, the plugins) nor running turns (`tether.agent.api`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..kernel import Context, tether_home
from ..plugins.approval import Approval
from ..plugins.permissions import Permissions
from ..tools.execution import ToolExecution
from ..tools.slow_stop import SLOW_STOP, SlowStop
from .agent_options import AgentOptions
from .agent_state import Booted, restore_grants, shielded
from .boot import start
from .claude_options import Scratch, added_directories, apply_after_boot, builtin_overrides
from .compactor import Compactor
from .events import AgentEvent
from .instructions import with_instructions
from .loop import default_system_prompt
from .policy import install_policy
from .session import SessionStore

__all__ = ["boot_agent"]


async def boot_agent(
    options: AgentOptions,
    *,
    dispatch: Callable[[AgentEvent], None],
    slow_stop: Callable[[ToolExecution, SlowStop], None],
) -> Booted:
    """Boot an agent with `options`; its events go to `dispatch`, its calls' slow stops to
    `slow_stop`. Raises what `Agent.start()` says, everything built disposed first."""
    home = options.home
    claude = options.claude_options
    scratch = Scratch()
    private = (
        tempfile.TemporaryDirectory(prefix="tether-agent-", ignore_cleanup_errors=True)
        if options.private_home
        else None
    )
    if private is not None:
        home = Path(private.name)
    if options.config is not None:
        config_paths: list[Path] | None = [options.config]
    else:
        config_paths = [] if options.private_home else None
    try:
        settings_file = (
            None if claude.settings is None else scratch.file_for(claude.settings, "--settings")
        )
        mcp_files = [scratch.file_for(value, "--mcp-config") for value in claude.mcp_config]
        directories = added_directories(claude, options.cwd, settings_file)
        ctx = await start(
            cwd=options.cwd,
            config_paths=config_paths,
            agent=True,
            home=home,
            builtins=options.builtins,
            sandbox=options.sandbox,
            added_dirs=directories,
            overrides=builtin_overrides(claude, settings_file, mcp_files, directories),
        )
    except BaseException:
        scratch.close()
        if private is not None:
            private.cleanup()
        raise
    booted = Booted(ctx, dispatch)
    booted.scratch = scratch
    booted.private_home = private
    try:
        for spec in options.plugins:
            plugin, config = spec if isinstance(spec, tuple) else (spec, None)
            await ctx.plugin(plugin, config)
        for definition in options.tools:
            ctx.tools.register(definition)
        apply_after_boot(ctx, claude, settings_file)
        _apply_permissions(ctx, options)
        _attach_approver(ctx, booted, options)
        _own_tools(ctx, options)
        checks = options.checks if options.deny is None else (options.deny.check, *options.checks)
        install_policy(ctx, checks)
        ctx.on(SLOW_STOP, slow_stop)
        llm = booted.pick_model(options.model)
        booted.store = store = SessionStore(None if home is None else home / "sessions")
        _sweep_once(store)  # what writers killed mid-creation left behind
        booted.compactor = Compactor(store, options.context_window, dispatch)
        if options.resume is not None:
            session = store.open(options.resume)
            restore_grants(ctx, session)
        else:
            session = store.create(cwd=options.cwd)
        booted.session = session
        base = options.settings.system_prompt or default_system_prompt(options.cwd)
        if options.instruction_files:
            base = with_instructions(base, options.cwd, options.home or tether_home())
        booted.settings = replace(options.settings, system_prompt=base)
        booted.loop = booted.new_loop(llm, session)
    except BaseException:
        await shielded(booted.dispose())
        raise
    return booted


def _apply_permissions(ctx: Context, options: AgentOptions) -> None:
    if options.permission_mode is None and not options.allow:
        return
    permissions = ctx.get("permissions")
    if not isinstance(permissions, Permissions):
        raise ValueError(
            "permission_mode and allow need the permissions plugin, which this agent does "
            "not mount (builtins=False, or disabled in the config); drop them or mount it"
        )
    for rule in options.allow:
        permissions.allow(rule)
    if options.permission_mode is not None:
        permissions.set_mode(options.permission_mode)


def _own_tools(ctx: Context, options: AgentOptions) -> None:
    """The tools the application passed are the application's: the permission rules allow
    them (deny rules and `policy` checks still apply; a check can `Ask`)."""
    permissions = ctx.get("permissions")
    if isinstance(permissions, Permissions):
        for definition in options.tools:
            permissions.allow(definition.name)


def _attach_approver(ctx: Context, booted: Booted, options: AgentOptions) -> None:
    if options.approver is None:
        return
    approval = ctx.get("approval")
    if not isinstance(approval, Approval):
        raise ValueError(
            "approver needs the approval plugin, which this agent does not mount "
            "(builtins=False, or disabled in the config); mount tether.plugins.approval"
        )
    booted.detach_approver = approval.attach(options.approver)


_SWEPT: set[Path] = set()
"""The sessions roots an agent of this process has swept."""


def _sweep_once(store: SessionStore) -> None:
    """Sweep a sessions root once per process: a sweep looks into every session directory whose
    writer is alive (it cannot know them clean), so an agent per sweep would make starting a
    thousand agents over one home quadratic. Leftovers of a writer killed later are swept by the
    next process (every `tether` command sweeps)."""
    root = store.root.resolve()
    if root not in _SWEPT:
        store.sweep()
        _SWEPT.add(root)

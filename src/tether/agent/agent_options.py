"""The options of a public `Agent`: what `Agent(...)` was given, checked and resolved once.

Owns the preset's defaults (`"library"`: a short neutral prompt, no instruction files, no
built-ins, a private home; `"coding"`: tether's coding agent as `tether run` boots it), the
checks a bad argument fails at construction (an unknown preset, a bad `context_window`, a tool
that is neither a `ToolDefinition` nor a function, bad deny rules or settings), and the frozen
`AgentOptions` the boot reads (`tether.agent.agent_boot`). Does not own what the arguments mean
(`Agent`'s docstring, `tether.agent.api`) nor booting (`tether.agent.agent_boot`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from ..tools.definition import ToolDefinition, tool
from .boot import SandboxChoice
from .claude_options import ClaudeOptions
from .llm import LlmConfig
from .llm.service import Llm
from .loop import AgentSettings
from .policy import LIBRARY_PROMPT, PRESETS, Check, DenyRules, Preset

if TYPE_CHECKING:
    from ..plugins.approval import Prompter

__all__ = ["AgentOptions", "PluginSpec", "ToolSpec", "agent_options"]

ToolSpec: TypeAlias = ToolDefinition | Callable[..., object]
"""A tool for `Agent(tools=...)`: a `ToolDefinition` (`define_tool`, `@tool`) or a plain typed
function, which is made one with `tool(fn)`."""

PluginSpec: TypeAlias = object | tuple[object, Mapping[str, object]]
"""A plugin for `Agent(plugins=...)`: a plugin object (module, class or function, as
`ctx.plugin` takes), or `(plugin, config)`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentOptions:
    """`Agent(...)`'s arguments with the preset applied (see `Agent`'s docstring)."""

    model: LlmConfig | Llm | str | None
    tools: tuple[ToolDefinition, ...]
    plugins: tuple[PluginSpec, ...]
    settings: AgentSettings
    instruction_files: bool
    cwd: Path
    home: Path | None
    private_home: bool
    """A library agent given no `home` keeps its state in a directory of its own, removed
    when it closes, and reads no config file it was not given."""
    config: Path | None
    builtins: bool
    resume: str | None
    permission_mode: str | None
    allow: tuple[str, ...]
    approver: Prompter | None
    context_window: int | None
    sandbox: SandboxChoice | None
    claude_options: ClaudeOptions
    deny: DenyRules | None
    checks: tuple[Check, ...]


def agent_options(
    *,
    model: LlmConfig | Llm | str | None,
    tools: Sequence[ToolSpec],
    plugins: Sequence[PluginSpec],
    instructions: str | None,
    instruction_files: bool | None,
    cwd: Path | str | None,
    home: Path | str | None,
    config: Path | str | None,
    builtins: bool | None,
    session: str | None,
    max_steps: int,
    max_parallel_tool_calls: int,
    max_tokens: int | None,
    permission_mode: str | None,
    allow: Sequence[str],
    approver: Prompter | None,
    context_window: int | None,
    sandbox: SandboxChoice | None,
    claude_options: ClaudeOptions | None,
    deny: Sequence[str],
    policy: Check | Sequence[Check],
    preset: Preset,
) -> AgentOptions:
    """Check `Agent(...)`'s arguments and resolve them against `preset`; raises `ValueError`
    (or `TypeError` for a tool) naming the bad one."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}: one of {', '.join(map(repr, PRESETS))}")
    coding = preset == "coding"
    builtins = coding if builtins is None else builtins
    instruction_files = coding if instruction_files is None else instruction_files
    if instructions is None and not coding:
        instructions = LIBRARY_PROMPT
    if context_window is not None and (isinstance(context_window, bool) or context_window < 1):
        raise ValueError(
            f"context_window must be a positive number of tokens, got {context_window!r}"
        )
    resolved_cwd = Path(cwd if cwd is not None else Path.cwd()).resolve()
    resolved_home = Path(home).expanduser().resolve() if home is not None else None
    settings = AgentSettings(
        cwd=resolved_cwd,
        system_prompt=instructions,
        max_steps=max_steps,
        max_parallel_tool_calls=max_parallel_tool_calls,
        max_tokens=max_tokens,
    )
    definitions = tuple(_definition(spec) for spec in tools)
    rules = DenyRules(deny, workspace=resolved_cwd, home=resolved_home) if deny else None
    checks: tuple[Check, ...] = (policy,) if callable(policy) else tuple(policy)
    return AgentOptions(
        model=model,
        tools=definitions,
        plugins=tuple(plugins),
        settings=settings,
        instruction_files=instruction_files,
        cwd=resolved_cwd,
        home=resolved_home,
        private_home=home is None and not coding,
        config=None if config is None else Path(config),
        builtins=builtins,
        resume=session,
        permission_mode=permission_mode,
        allow=tuple(allow),
        approver=approver,
        context_window=context_window,
        sandbox=sandbox,
        claude_options=claude_options or ClaudeOptions(),
        deny=rules,
        checks=checks,
    )


def _definition(spec: ToolSpec) -> ToolDefinition:
    if isinstance(spec, ToolDefinition):
        return spec
    if callable(spec):
        return tool(spec)
    raise TypeError(
        f"tools: {spec!r} is neither a ToolDefinition nor a function; pass a @tool function, "
        "define_tool(...) or a typed function"
    )

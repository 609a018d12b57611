"""The `code-mode` plugin: provides `ctx.code_runtime` (Monty) and `ctx.prompt_sections` (the
`tools:sdk` stubs), and registers `run_code`. Which tools the model is sent is the registry's
presentation mode (`{id: tools, config: {mode: code}}`, or `TETHER_TOOLS_MODE` in the CLI).

Config (never model-facing): the runtime budgets of `CodeBudgets`, `max_parallel_calls` (inner
calls overlapping in one run; `1` is serial) and `timeout_ms` (the `run_code` call's own budget,
enforced by the timeout policy like any tool's; none by default). The `pydantic_monty` import
happens on the first run, so this module imports without the `code-mode` extra.

Mount: `await ctx.plugin(tether.plugins.code_mode.plugin, {...})`; in a config file,
`{id: code-mode, name: tether.plugins.code_mode.plugin}`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar, Final

from ...kernel import Context
from ...kernel.config_models import ConfigValue
from ...tools.registry import ToolRuntime
from .runtime import MontyRuntime
from .seam import CodeBudgets
from .tool import run_code_tool

if TYPE_CHECKING:  # resolved where a config is validated (tether.kernel.config_models)
    from pydantic import Field

__all__ = ["CodeModeConfig", "Config", "PromptSections", "apply", "inject", "name"]

name: Final = "code-mode"
inject: Final = ("tools",)


class CodeModeConfig(ConfigValue):
    """See the module docstring."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models

    compute_ms: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 60_000
    max_wall_ms: Annotated[float, Field(gt=0, le=2_147_483_647, allow_inf_nan=False)] = 600_000
    max_calls: Annotated[int, Field(ge=1)] = 100
    max_memory_mb: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 256
    max_output_bytes: Annotated[int, Field(ge=1)] = 1_048_576
    max_parallel_calls: Annotated[int, Field(ge=1)] = 10
    timeout_ms: Annotated[float | None, Field(gt=0, le=2_147_483_647, allow_inf_nan=False)] = None


Config = CodeModeConfig


class PromptSections:
    """`ctx.prompt_sections`: the system prompt sections the presentation mode asks for. The
    stubs leave out the tools `ctx`'s `permissions` service withholds (a deny rule names them
    whole: the model is not sent them natively either, `tether.agent.offered`)."""

    def __init__(self, tools: ToolRuntime, ctx: Context | None = None) -> None:
        self._tools = tools
        self._ctx = ctx

    def sections(self, agent: object | None = None) -> list[str]:
        """`tools:code-only` (code mode) and `tools:sdk` (code and both), for `agent`."""
        if self._tools.mode == "native":
            return []  # as prompt_sections says, without importing the stubs' renderer
        from .sdk import prompt_sections  # at the first code-mode prompt (issue 36)

        permissions = None if self._ctx is None else self._ctx.get("permissions")
        withholds = getattr(permissions, "withholds", None)  # the plugin, not imported here
        return prompt_sections(self._tools, agent, withholds if callable(withholds) else None)


def apply(ctx: Context, config: CodeModeConfig) -> None:
    """Provide `ctx.code_runtime` and register `run_code` (both undone on dispose)."""
    budgets = CodeBudgets(
        compute_ms=config.compute_ms,
        max_wall_ms=config.max_wall_ms,
        max_calls=config.max_calls,
        max_memory_mb=config.max_memory_mb,
        max_output_bytes=config.max_output_bytes,
    )
    ctx.provide("code_runtime", MontyRuntime(budgets))
    ctx.provide("prompt_sections", PromptSections(ctx.tools.runtime, ctx))
    ctx.tools.register(
        run_code_tool(
            ctx, max_parallel_calls=config.max_parallel_calls, timeout_ms=config.timeout_ms
        ),
        reserved=True,  # `run_code` is reserved for this plugin (tether.tools.registry)
    )

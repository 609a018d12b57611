"""`exit_plan_mode` (Claude Code's `ExitPlanMode`): the model presents its plan to leave plan
mode.

Owns the tool. The permission policy decides the call (`tether.plugins.permissions.policy`):
in plan mode it asks, so the user sees the plan and accepts it (the body then switches the mode
to `default` and tells the model to carry it out) or rejects it (the model reads why and the mode
stays `plan`). Where nobody can accept it (`tether run`), the policy allows the call, the body
hands the plan to `on_plan` (the run's result is the plan), keeps the mode `plan` and ends the
turn. Outside plan mode the call is a no-op that says so. Registered by the `permissions`
plugin the first time its mode is `plan`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ...tools.definition import ToolDefinition, ToolOutput, define_tool
from ...tools.execution import ToolRunContext
from .modes import PLAN_TOOL

__all__ = ["ACCEPTED", "PlanParameters", "plan_tool"]

ACCEPTED: Final = "The user accepted the plan; permission mode is now default. Carry it out."
_DESCRIPTION: Final = (
    "Use this when you are in plan mode and have finished planning: present the plan (markdown, "
    "concise, the concrete steps you will take) for the user to accept. Only read-only tools run "
    "in plan mode; once the plan is accepted you may make changes."
)


class PlanParameters(BaseModel):
    # built by the first call (its schema is precomputed: tether.tools.precomputed)
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    plan: str = Field(min_length=1, description="The plan to present, in markdown.")


class ModeHolder(Protocol):
    """What the tool needs of the `permissions` service."""

    @property
    def mode(self) -> str: ...

    def set_mode(self, mode: str) -> None: ...

    @property
    def on_plan(self) -> Callable[[str], None] | None: ...


def plan_tool(holder: ModeHolder) -> ToolDefinition:
    """The tool, bound to the service whose mode it leaves."""

    async def execute(args: PlanParameters, exec: ToolRunContext) -> str:
        if holder.mode != "plan":
            return f'not in plan mode (the mode is "{holder.mode}"): carry on'
        on_plan = holder.on_plan
        if on_plan is not None:
            on_plan(args.plan)
            exec.conclude_turn()
            return "The plan is recorded as the result of this non-interactive run; stop here."
        holder.set_mode("default")
        return ACCEPTED

    return define_tool(
        name=PLAN_TOOL,
        description=_DESCRIPTION,
        parameters=PlanParameters,
        output=ToolOutput(),
        execute=execute,
    )

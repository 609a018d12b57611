"""The `task` tool's model-facing parameters (a pydantic model: its descriptions are the schema).

Owns: `TaskParameters`. Imported by the tool's first call (`tether.agent.subagents.task` names it
with a `ModelRef`), not at boot. Does not own the checks before a child exists (`task.py`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["TaskParameters"]


class TaskParameters(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built by the first call

    description: str = Field(description="A short (3-5 word) description of the task")
    prompt: str = Field(description="The task for the agent to perform")
    subagent_type: str = Field(description="The type of specialized agent to use for this task")
    run_in_background: bool = Field(
        default=False,
        description="Run the agent as a background job: the call returns its job id at once.",
    )

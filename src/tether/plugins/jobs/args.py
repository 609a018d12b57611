"""The model-facing parameters of `job_output`, `job_list` and `job_kill` (pydantic models: their
descriptions are the schema).

Owns: the three argument models. Imported by a tool's first call (`tether.plugins.jobs.tools`
names them with a `ModelRef`), not at boot. Does not own the argument checks with their texts
(`tether.plugins.jobs.tools`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["JobKillParameters", "JobListParameters", "JobOutputParameters"]


class JobOutputParameters(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built by the first call

    job_id: str = Field(description="Job id returned by the tool that started the background work.")
    wait: bool = Field(
        default=False,
        description="Block until the job finishes or the wait runs out; a wait that runs out "
        "returns [status: running] and leaves the job alive.",
    )
    wait_ms: float | None = Field(
        default=None,
        description="Longest wait in milliseconds (default and cap are configured); setting "
        "it implies wait: true.",
    )


class JobKillParameters(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built by the first call

    job_id: str = Field(description="Job id returned by the tool that started the background work.")
    reason: str | None = Field(
        default=None, description="Why the job is stopped (logged and passed to the job)."
    )


class JobListParameters(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built by the first call

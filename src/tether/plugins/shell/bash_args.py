"""The `bash` tool's model-facing parameters (pydantic models: their descriptions are the schema).

Owns: `BashParameters` and its two mounted forms — `BashBackgroundParameters` (offers
`run_in_background`) and `ForegroundOnlyParameters` (background runs disabled). Imported by the
tool's first call (`tether.plugins.shell.bash` names them with a `ModelRef`), not at boot. Does
not own the value checks with their model-facing texts (`tether.plugins.shell.bash`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BashBackgroundParameters", "BashParameters", "ForegroundOnlyParameters"]


class BashParameters(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built by the first call

    command: str = Field(description="The bash command to execute.")
    description: str = Field(
        description="Clear, concise description of what this command does in 5-10 words, in "
        "active voice (e.g. 'List files in current directory', 'Install package "
        "dependencies'). Shown to the user only."
    )
    timeout_ms: float | None = Field(
        default=None,
        description="Timeout in milliseconds; the executor applies its default and cap and "
        "kills the command when it expires.",
    )
    workdir: str | None = Field(
        default=None,
        description="Working directory; defaults to the session workspace. A relative path is "
        "resolved against it.",
    )


class BashBackgroundParameters(BashParameters):
    run_in_background: bool = Field(
        default=False,
        description="Return a job id immediately instead of waiting; read the output with "
        "job_output and stop it with job_kill. No timeout applies.",
    )


# The parameters when background runs are disabled: `run_in_background` is not offered, but a
# model that sends it anyway gets a clear refusal instead of a foreground run. (No docstring: a
# model's docstring would become the schema's description.)
class ForegroundOnlyParameters(BashParameters):
    model_config = ConfigDict(extra="allow")

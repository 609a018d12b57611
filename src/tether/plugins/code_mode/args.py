"""`run_code`'s model-facing parameters (a pydantic model: its descriptions are the schema).

Owns: `RunCodeArgs`. Imported by the tool's first call (`tether.plugins.code_mode.tool` names it
with a `ModelRef`), not at boot. Does not own the checks of the body (`description` non-blank).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RunCodeArgs"]


class RunCodeArgs(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built by the first call

    code: str = Field(description="The program: the body of an async Python function.")
    description: str = Field(
        description=(
            "Clear, concise description of what this program does in active voice, 5-10 words "
            '(shown in the UI). Examples: "Count TODO markers across packages"; "Read failing '
            'test and its fixture"; "Rename config key in every cordis.yml".'
        )
    )

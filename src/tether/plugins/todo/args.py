"""`todo_write`'s model-facing parameters (pydantic models: their descriptions are the schema).

Owns: `TodoArgs` and `TodoItem`. Imported by the tool's first call (`tether.plugins.todo.tool`
names them with a `ModelRef`), not at boot. Does not own the list rules
(`tether.plugins.todo.tool`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .tool import Status

__all__ = ["TodoArgs", "TodoItem"]


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built by the first call

    content: str = Field(description="What the task is — a short imperative line.")
    status: Status = Field(
        description="pending (not started) | in_progress (now) | completed (done)."
    )
    activeForm: str | None = Field(  # Claude Code's field name
        default=None,
        description="The task in the present continuous, shown while it is in progress "
        '("Running the tests"). Optional.',
    )


class TodoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built by the first call

    todos: list[TodoItem] = Field(
        description="The COMPLETE task list, replacing any previous list."
    )

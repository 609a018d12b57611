"""`todo_write` (spec §6.4): the model records its whole task list; each call replaces the last.

Owns: the description (with the single/parallel `in_progress` clause chosen by config), the
parameters (Claude Code's `content`, `status` and optional `activeForm`), the list rules
(trimmed non-empty content, no duplicates, at most one `in_progress` unless parallel work is
allowed; a blank `activeForm` is dropped), the `todo/write` session event and the rendering.
Does not own the session log or the `todos` projection (the agent layer): the tool appends
through the owning agent's session, `agent.session.append("todo/write", {"todos": [...]})`.

Order: the list is validated first, then an owning agent session is required. The argument
models live in `tether.plugins.todo.args`, imported by the first call (and importable from here).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import (
    TYPE_CHECKING,
    ClassVar,
    Final,
    Literal,
    NotRequired,
    Protocol,
    cast,
    runtime_checkable,
)

from typing_extensions import TypedDict  # pydantic needs it on Python 3.11

from ...core.errors import HarnessError
from ...core.json import JsonValue
from ...kernel import Context
from ...kernel.config_models import ConfigValue
from ...tools.definition import ToolDefinition, ToolOutput, define_tool
from ...tools.execution import ToolRunContext
from ...tools.model_ref import ModelRef
from ...tools.results import ContentBlock, text_content

if TYPE_CHECKING:  # imported by the first call, not at boot
    from .args import TodoArgs, TodoItem

__all__ = [
    "INVALID_TODOS",
    "NO_SESSION",
    "SessionLog",
    "TodoArgs",
    "TodoConfig",
    "TodoError",
    "TodoItem",
    "TodoValue",
    "apply",
    "description",
    "inject",
    "name",
    "todo_write",
]


def __getattr__(attribute: str) -> object:
    """The argument models, from `args`, for code that imports them from here."""
    if attribute in ("TodoArgs", "TodoItem"):
        from . import args

        return getattr(args, attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


name: Final = "todo"
inject: Final = ("tools",)

INVALID_TODOS: Final = "INVALID_TODOS"
NO_SESSION: Final = "TODO_NO_SESSION"

_HEAD: Final = (
    "Record and update a structured task list for the current work. Send the ENTIRE list every"
    " call — it REPLACES the previous list (there are no partial updates, no per-item edits)."
    " Use it to plan multi-step work and show progress: add one todo per concrete step before"
    " you start. "
)
_PARALLEL: Final = (
    "Mark every todo being actively worked on `in_progress` — several at once when work"
    " genuinely runs in parallel (e.g. concurrent subagents or background commands), one for"
    " sequential work; while work remains, at least one task should be `in_progress`. "
)
_SINGLE: Final = (
    "Keep AT MOST ONE todo `in_progress` at a time; while work remains, exactly one active task"
    " should be `in_progress`. "
)
_TAIL: Final = (
    "Mark a todo `completed` the moment it is done (do not batch completions), and allow no"
    " `in_progress` item only once all work is complete. Skip the list for trivial single-step"
    " tasks. Statuses: `pending` (not started), `in_progress` (being worked on now), `completed`"
    " (finished)."
)

Status = Literal["pending", "in_progress", "completed"]


class TodoConfig(ConfigValue):
    """`allow_parallel_in_progress` is required: a deployment decides whether several tasks may
    be `in_progress` at once."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models

    allow_parallel_in_progress: bool


Config = TodoConfig


class Todo(TypedDict):
    content: str
    status: Status
    activeForm: NotRequired[str]


class Counts(TypedDict):
    pending: int
    in_progress: int
    completed: int


class TodoValue(TypedDict):
    todos: list[Todo]
    counts: Counts


class TodoError(HarnessError):
    """A list the rules refuse (`INVALID_TODOS`) or a call without an agent session
    (`TODO_NO_SESSION`)."""


@runtime_checkable
class SessionLog(Protocol):
    """What `todo_write` needs of the owning agent's session: a synchronous append."""

    def append(self, type: str, data: JsonValue) -> object: ...


def description(allow_parallel: bool) -> str:
    """The exact tool description for the configured `in_progress` rule."""
    return _HEAD + (_PARALLEL if allow_parallel else _SINGLE) + _TAIL


def _checked(items: Sequence[TodoItem], allow_parallel: bool) -> list[Todo]:
    todos: list[Todo] = []
    seen: set[str] = set()
    active = 0
    for item in items:
        content = item.content.strip()
        if not content:
            raise TodoError("invalid todo: `content` must be a non-empty string", INVALID_TODOS)
        if content in seen:
            quoted = json.dumps(content, ensure_ascii=False)
            raise TodoError(f"invalid todos: duplicate content {quoted}", INVALID_TODOS)
        seen.add(content)
        active += item.status == "in_progress"
        todo = Todo(content=content, status=item.status)
        active_form = (item.activeForm or "").strip()
        if active_form:
            todo["activeForm"] = active_form
        todos.append(todo)
    if not allow_parallel and active > 1:
        raise TodoError(
            f"invalid todos: at most one task may be in_progress (got {active})", INVALID_TODOS
        )
    return todos


def _render(_args: object, value: JsonValue) -> Sequence[ContentBlock]:
    counts = cast(TodoValue, value)["counts"]
    return text_content(
        f"Updated todo list: {counts['pending']} pending, {counts['in_progress']} in progress,"
        f" {counts['completed']} completed."
    )


def todo_write(config: TodoConfig) -> ToolDefinition:
    """The `todo_write` definition for this config."""
    allow_parallel = config.allow_parallel_in_progress

    def execute(args: TodoArgs, exec: ToolRunContext) -> TodoValue:
        todos = _checked(args.todos, allow_parallel)
        session = getattr(exec.agent, "session", None)
        if not isinstance(session, SessionLog):
            raise TodoError("todo_write requires an owning agent session", NO_SESSION)
        session.append("todo/write", {"todos": cast(JsonValue, todos)})
        statuses = [todo["status"] for todo in todos]
        counts = Counts(
            pending=statuses.count("pending"),
            in_progress=statuses.count("in_progress"),
            completed=statuses.count("completed"),
        )
        return TodoValue(todos=todos, counts=counts)

    async def run(args: TodoArgs, exec: ToolRunContext) -> TodoValue:
        return execute(args, exec)  # no I/O: stay on the loop, where the session log lives

    return define_tool(
        name="todo_write",
        description=description(allow_parallel),
        parameters=ModelRef("tether.plugins.todo.args:TodoArgs"),
        output=ToolOutput(schema=TodoValue, render=_render),
        execute=run,
    )


def apply(ctx: Context, config: TodoConfig) -> None:
    """Register `todo_write`."""
    ctx.tools.register(todo_write(config))

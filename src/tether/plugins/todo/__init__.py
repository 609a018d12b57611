"""Task-list capability: the `todo_write` tool (plugin `todo`, `tether.plugins.todo.tool`)."""

from .tool import SessionLog as SessionLog
from .tool import TodoConfig as TodoConfig
from .tool import TodoError as TodoError

__all__ = ["SessionLog", "TodoConfig", "TodoError"]

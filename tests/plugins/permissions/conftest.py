"""The permission tests use the same policy fixtures as the hook tests (a fresh `~`, a project
folder, tools + shell + bash + fs rooted there, a session with turn 1 open, a fake agent)."""

from ..hooks.conftest import agent, ctx, home, project, session

__all__ = ["agent", "ctx", "home", "project", "session"]

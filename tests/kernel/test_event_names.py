"""Known event names (kernel/events.py, issue 38): a misspelt event fails closed at registration.

Declaring a name (`EventKey(...)`, `declare_event`) makes it known; `declare_namespace` closes a
namespace. `Context.on` refuses an undeclared name in a closed namespace or close to a known one,
naming the nearest known event and saying how to declare a new one; an application's own,
unrelated names keep working.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import tether.tools  # noqa: F401  (declares the tools/ events)
from tether.kernel import Context, EventKey, UnknownEventError, declare_event, declare_namespace
from tether.kernel.events import known_events


def test_a_misspelt_tool_event_raises_naming_the_known_one() -> None:
    with pytest.raises(UnknownEventError, match='did you mean "tools/pre-execute"'):
        Context().on("tools/pre_execute", lambda *args: None)


def test_the_refusal_says_how_a_plugin_declares_a_new_event() -> None:
    with pytest.raises(UnknownEventError, match=r'declare_event\("tools/pre_execute"\)'):
        Context().on("tools/pre_execute", lambda *args: None)


def test_an_undeclared_name_in_the_closed_tools_namespace_raises() -> None:
    with pytest.raises(UnknownEventError, match='"tools/" events are all declared'):
        Context().on("tools/whatever-happened", lambda *args: None)


def test_a_wrong_namespace_close_to_a_known_event_raises() -> None:
    with pytest.raises(UnknownEventError, match='did you mean "tools/pre-execute"'):
        Context().on("tool/pre-execute", lambda *args: None)


def test_the_refused_listener_is_not_registered() -> None:
    ctx = Context()
    with pytest.raises(UnknownEventError):
        ctx.on("tools/pre_execute", lambda *args: None)
    assert ctx.listeners("tools/pre_execute") == ()


def test_an_unrelated_application_event_is_accepted() -> None:
    ctx = Context()
    heard: list[int] = []
    ctx.on("myapp/ready", heard.append)
    ctx.emit("myapp/ready", 1)
    assert heard == [1]


def test_a_declared_name_is_accepted_in_a_closed_namespace() -> None:
    declare_namespace("test-closed")
    declare_event("test-closed/known")
    ctx = Context()
    ctx.on("test-closed/known", lambda: None)
    with pytest.raises(UnknownEventError):
        ctx.on("test-closed/unknown", lambda: None)


def test_an_event_key_declares_its_name() -> None:
    key: EventKey[Callable[[], None]] = EventKey("test-keys/declared")
    assert key.name == "test-keys/declared"
    assert "test-keys/declared" in known_events()


def test_every_event_tether_dispatches_is_declared() -> None:
    import tether.agent.loop
    import tether.agent.subagents.child
    import tether.plugins.approval.service  # noqa: F401

    expected = {
        "tools/pre-execute",
        "tools/execute",
        "tools/post-execute",
        "tools/result",
        "tools/change",
        "tools/settle",
        "tools/slow-stop",
        "tools/code-dispatch-log",
        "agent/session-start",
        "agent/session-end",
        "agent/pre-compact",
        "agent/post-compact",
        "agent/prompt",
        "agent/turn-stopping",
        "subagent/start",
        "subagent/end",
        "approval/preflight",
        "approval/permission-request",
        "approval/notification",
    }
    assert expected <= set(known_events())


def test_an_empty_event_name_cannot_be_declared() -> None:
    with pytest.raises(ValueError, match="non-empty string"):
        declare_event("")

"""`todo_write` replaces the whole task list: contents are trimmed, non-empty and unique; at most
one task is `in_progress` unless the deployment allows parallel work; the list is validated
before an owning agent session is required; the session gets one `todo/write` event per call."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tether.core.json import JsonValue
from tether.core.signals import AbortController
from tether.kernel import Context
from tether.kernel.errors import InvalidPluginConfig
from tether.plugins.todo import tool as todo
from tether.tools import (
    ToolExecutionInput,
    ToolExecutionResult,
    ToolFailure,
    ToolRuntime,
    ToolSuccess,
)


class Session:
    def __init__(self) -> None:
        self.events: list[tuple[str, JsonValue]] = []

    def append(self, type: str, data: JsonValue) -> None:
        self.events.append((type, data))


class Agent:
    def __init__(self) -> None:
        self.session = Session()


async def mounted(parallel: bool) -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(todo, {"allow_parallel_in_progress": parallel})
    return ctx


@pytest.fixture
async def ctx() -> AsyncIterator[Context]:
    context = await mounted(parallel=False)
    yield context
    await context.dispose()


async def write(ctx: Context, todos: object, agent: object | None) -> ToolExecutionResult:
    result: ToolExecutionResult = await ctx.tools.execute(
        ToolExecutionInput(
            call_id="c1",
            name="todo_write",
            arguments={"todos": todos},
            signal=AbortController().signal,
            agent=agent,
        )
    )
    return result


async def test_a_list_is_recorded_trimmed_and_counted(ctx: Context) -> None:
    agent = Agent()
    result = await write(
        ctx,
        [
            {"content": "  plan  ", "status": "completed"},
            {"content": "build", "status": "in_progress"},
            {"content": "test", "status": "pending"},
            {"content": "ship", "status": "pending"},
        ],
        agent,
    )
    assert isinstance(result, ToolSuccess)
    assert result.content[0]["text"] == "Updated todo list: 2 pending, 1 in progress, 1 completed."
    todos = [
        {"content": "plan", "status": "completed"},
        {"content": "build", "status": "in_progress"},
        {"content": "test", "status": "pending"},
        {"content": "ship", "status": "pending"},
    ]
    assert result.value == {
        "todos": todos,
        "counts": {"pending": 2, "in_progress": 1, "completed": 1},
    }
    assert agent.session.events == [("todo/write", {"todos": todos})]


async def test_each_call_replaces_the_list_with_one_event(ctx: Context) -> None:
    agent = Agent()
    await write(ctx, [{"content": "a", "status": "in_progress"}], agent)
    await write(ctx, [{"content": "a", "status": "completed"}], agent)
    assert [data for _, data in agent.session.events] == [
        {"todos": [{"content": "a", "status": "in_progress"}]},
        {"todos": [{"content": "a", "status": "completed"}]},
    ]


async def test_two_in_progress_tasks_are_refused_without_parallel_work(ctx: Context) -> None:
    agent = Agent()
    result = await write(
        ctx,
        [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}],
        agent,
    )
    assert isinstance(result, ToolFailure)
    assert result.error.message == "invalid todos: at most one task may be in_progress (got 2)"
    assert result.code == "INVALID_TODOS"
    assert agent.session.events == []


async def test_parallel_work_allows_several_in_progress_tasks() -> None:
    ctx = await mounted(parallel=True)
    result = await write(
        ctx,
        [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}],
        Agent(),
    )
    assert isinstance(result, ToolSuccess)
    assert (
        "several at once when work genuinely runs in parallel"
        in ctx.tools.get("todo_write").description
    )
    await ctx.dispose()


async def test_blank_and_duplicate_contents_are_refused(ctx: Context) -> None:
    blank = await write(ctx, [{"content": "   ", "status": "pending"}], Agent())
    assert isinstance(blank, ToolFailure)
    assert blank.error.message == "invalid todo: `content` must be a non-empty string"
    dup = await write(
        ctx,
        [
            {"content": 'say "hi"', "status": "pending"},
            {"content": ' say "hi" ', "status": "completed"},
        ],
        Agent(),
    )
    assert isinstance(dup, ToolFailure)
    assert dup.error.message == 'invalid todos: duplicate content "say \\"hi\\""'


async def test_the_list_is_validated_before_an_agent_is_required(ctx: Context) -> None:
    invalid = await write(ctx, [{"content": "", "status": "pending"}], None)
    assert isinstance(invalid, ToolFailure)
    assert invalid.error.message == "invalid todo: `content` must be a non-empty string"
    valid = await write(ctx, [{"content": "a", "status": "pending"}], None)
    assert isinstance(valid, ToolFailure)
    assert valid.error.message == "todo_write requires an owning agent session"
    assert valid.code == "TODO_NO_SESSION"


async def test_unknown_statuses_and_extra_keys_are_invalid_arguments(ctx: Context) -> None:
    result = await write(ctx, [{"content": "a", "status": "done", "id": 1}], Agent())
    assert isinstance(result, ToolFailure)
    assert result.code == "INVALID_ARGS"
    assert result.error.message.startswith("invalid arguments: todos[0].status: ")


async def test_claude_codes_active_form_is_accepted_and_recorded(ctx: Context) -> None:
    agent = Agent()
    result = await write(
        ctx,
        [
            {"content": "Run the tests", "status": "in_progress", "activeForm": "Running tests"},
            {"content": "Ship", "status": "pending", "activeForm": "  "},
        ],
        agent,
    )
    assert isinstance(result, ToolSuccess)
    assert agent.session.events == [
        (
            "todo/write",
            {
                "todos": [
                    {
                        "content": "Run the tests",
                        "status": "in_progress",
                        "activeForm": "Running tests",
                    },
                    {"content": "Ship", "status": "pending"},
                ]
            },
        )
    ]


async def test_the_description_and_schema_follow_the_spec(ctx: Context) -> None:
    (schema,) = ctx.tools.schemas()
    assert schema["description"] == todo.description(False)
    assert "Keep AT MOST ONE todo `in_progress` at a time" in schema["description"]
    items = schema["parameters"]["properties"]["todos"]["items"]
    assert items["additionalProperties"] is False
    assert items["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert schema["parameters"]["required"] == ["todos"]


async def test_the_parallel_setting_is_required_config() -> None:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    with pytest.raises(InvalidPluginConfig, match="allow_parallel_in_progress"):
        await ctx.plugin(todo, {})
    await ctx.dispose()

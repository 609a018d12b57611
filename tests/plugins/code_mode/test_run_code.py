"""`run_code` end to end with the real Monty sandbox (spec §8.3, tool-runtime §5.5; issue 14).

Contract:
- A binding call becomes a nested call through the whole pipeline: call id `<outer>:code:<n>`,
  the outer root call id, agent and token (`parent`), the run's signal. Policy applies to it
  exactly as to a top-level call.
- Concurrency-safe calls gathered in the program overlap (up to `max_parallel_calls`);
  exclusive tools (bash) run alone, in submission order.
- A failed call raises `ToolCallError` (the built-in `RuntimeError`) whose message starts with
  the tool's name; an inner `TOOL_TIMEOUT` is catchable that way.
- Budgets end the run `CODE_RUN_FAILED` with the kind and the budget named.
- An outer abort or timeout stops the sandbox worker, dispatches nothing more, awaits the calls
  in flight (each publishes its one result first) and ends `run_code` `ABORTED` / `TOOL_TIMEOUT`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tether import AbortController
from tether.agent.session import SessionStore
from tether.plugins.approval import Approval
from tether.plugins.code_mode.exceptions import string_exception_arguments
from tether.plugins.permissions import Permissions
from tether.tools import (
    Allow,
    ToolExecution,
    ToolExecutionInput,
    ToolOutput,
    ToolRunContext,
    UserMessage,
    define_tool,
    user_message,
)

from ..hooks._support import FakeAgent, call_bash
from ..shell._support import alive, marker, sleeping, until
from ._support import code_of, text_of
from .conftest import MakeLab


def text_of_message(message: UserMessage) -> str:
    return "".join(str(block.get("text", "")) for block in message.content)


async def test_gathered_concurrency_safe_calls_overlap(make_lab: MakeLab) -> None:
    lab = await make_lab()

    result = await lab.run(
        "import asyncio\n"
        "r = await asyncio.gather(tools.nap({'ms': 500, 'label': 'a'}),"
        " tools.nap({'ms': 500, 'label': 'b'}))\n"
        "return r"
    )

    assert text_of(result) == '[\n  "slept a",\n  "slept b"\n]'
    (a_start, a_end), (b_start, b_end) = lab.naps["a"], lab.naps["b"]
    assert b_start < a_end
    assert a_start < b_end


async def test_max_parallel_calls_of_one_runs_gathered_calls_one_after_another(
    make_lab: MakeLab,
) -> None:
    lab = await make_lab(max_parallel_calls=1)

    await lab.run(
        "import asyncio\n"
        "await asyncio.gather(tools.nap({'ms': 100, 'label': 'a'}),"
        " tools.nap({'ms': 100, 'label': 'b'}))"
    )

    assert lab.naps["a"][1] <= lab.naps["b"][0]


async def test_gathered_bash_calls_run_alone_because_bash_is_exclusive(
    make_lab: MakeLab, project: Path
) -> None:
    lab = await make_lab()
    command = "echo start-{0} >> order; sleep 0.2; echo end-{0} >> order"
    first, second = command.format(1), command.format(2)

    result = await lab.run(
        "import asyncio\n"
        f"await asyncio.gather(tools.bash({{'command': {first!r}, 'description': 'x'}}),"
        f" tools.bash({{'command': {second!r}, 'description': 'y'}}))"
    )

    assert not result.is_error
    assert (project / "order").read_text().split() == ["start-1", "end-1", "start-2", "end-2"]


async def test_inner_calls_are_nested_calls_of_the_run_code_call(make_lab: MakeLab) -> None:
    lab = await make_lab()
    seen: list[ToolExecution] = []

    async def record(exec: ToolExecution, next: object) -> Allow:
        seen.append(exec)
        return Allow()

    lab.ctx.on("tools/pre-execute", record)
    agent = object()

    await lab.run(
        "await tools.nap({'ms': 1})\nawait tools.nap({'ms': 1})", agent=agent, call_id="outer"
    )

    outer, first, second = seen
    assert [e.call_id for e in seen] == ["outer", "outer:code:1", "outer:code:2"]
    assert [e.root_call_id for e in seen] == ["outer", "outer", "outer"]
    assert first.parent is outer.token
    assert second.parent is outer.token
    assert first.agent is agent
    assert second.agent is agent
    assert outer.parent is None


async def test_a_failed_call_raises_tool_call_error_naming_the_tool(make_lab: MakeLab) -> None:
    lab = await make_lab()

    result = await lab.run(
        "try:\n"
        "    await tools.nap({'ms': 'soon'})\n"
        "except ToolCallError as e:\n"
        "    print(type(e).__name__, str(e).split(':')[0])"
    )

    assert text_of(result) == "RuntimeError nap"
    assert lab.inner() == [("rc:code:1", "INVALID_ARGS")]


async def test_run_code_is_never_a_binding(make_lab: MakeLab) -> None:
    lab = await make_lab()

    result = await lab.run(
        "try:\n"
        "    await tools['run_code']({'code': '1', 'description': 'x'})\n"
        "except ToolCallError as e:\n"
        "    print(e)"
    )

    assert text_of(result) == 'run_code: unknown binding "tools.run_code"'
    assert lab.inner() == []


async def test_an_inner_tool_timeout_is_catchable_in_the_program(make_lab: MakeLab) -> None:
    lab = await make_lab(nap_timeout_ms=100)

    result = await lab.run(
        "try:\n"
        "    await tools.nap({'ms': 30000})\n"
        "except ToolCallError as e:\n"
        "    print('caught', e)\n"
        "return 'went on'"
    )

    assert text_of(result) == "caught nap: tool call timed out after 100ms\nwent on"
    assert lab.inner() == [("rc:code:1", "TOOL_TIMEOUT")]


async def test_an_endless_loop_fails_naming_the_compute_budget(make_lab: MakeLab) -> None:
    lab = await make_lab(budgets={"compute_ms": 500})

    result = await lab.run("print('looping')\nwhile True:\n    pass")

    assert code_of(result) == "CODE_RUN_FAILED"
    assert text_of(result) == (
        "Error: code run failed (timeout): compute budget exhausted (500ms busy)\n"
        "Captured output:\nlooping"
    )


async def test_time_awaiting_a_tool_does_not_count_against_the_compute_budget(
    make_lab: MakeLab,
) -> None:
    lab = await make_lab(budgets={"compute_ms": 500})

    result = await lab.run("return await tools.nap({'ms': 2000, 'label': 'long'})")

    assert text_of(result) == "slept long"


async def test_the_call_budget_stops_the_run_before_the_next_dispatch(make_lab: MakeLab) -> None:
    lab = await make_lab(budgets={"max_calls": 3})

    result = await lab.run("for i in range(5):\n    await tools.nap({'ms': 1})")

    assert text_of(result) == (
        "Error: code run failed (timeout): call budget exhausted (3 tool calls)"
    )
    assert [call_id for call_id, _ in lab.inner()] == ["rc:code:1", "rc:code:2", "rc:code:3"]


async def test_a_program_exception_fails_with_its_traceback_and_output(make_lab: MakeLab) -> None:
    lab = await make_lab()

    result = await lab.run("print('before')\nx = {}\nx['missing']")

    assert text_of(result) == (
        "Error: code run failed (exception): Traceback (most recent call last):\n"
        '  File "<program>", line 3, in <module>\n'
        "    x['missing']\n"
        "    ~~~~~~~~~~~~\n"
        "KeyError: missing\n"
        "Captured output:\nbefore"
    )


@pytest.mark.parametrize(
    ("program", "last_line"),
    [
        ("raise ValueError(1)", "ValueError: 1"),
        ("n = 2\nraise OSError(n, 'gone')", "OSError: (2, 'gone')"),
    ],
)
async def test_an_exception_built_from_a_non_string_reads_like_python(
    make_lab: MakeLab, program: str, last_line: str
) -> None:
    lab = await make_lab()

    result = await lab.run(program)

    text = text_of(result)
    assert text.startswith("Error: code run failed (exception): Traceback (most recent call last):")
    assert text.splitlines()[-1] == last_line
    assert "Internal error" not in text


def test_only_non_string_exception_arguments_are_rewritten_and_lines_keep_their_numbers() -> None:
    program = (
        "x = [ValueError('fine'), KeyError(k),\n"
        "     OSError(2,\n"
        "             'gone'), RuntimeError(), my_error(1), ValueError(*a)]\n"
        "raise TypeError(f'{x}')  # é\n"
    )

    assert string_exception_arguments(program) == (
        "x = [ValueError('fine'), KeyError(str(k)),\n"
        "     OSError(str((2,\n"
        "             'gone'))), RuntimeError(), my_error(1), ValueError(*a)]\n"
        "raise TypeError(str(f'{x}'))  # é\n"
    )
    assert string_exception_arguments("def (") == "def ("


async def test_the_program_has_no_filesystem_of_its_own(make_lab: MakeLab, project: Path) -> None:
    (project / "secret").write_text("s3cret")
    lab = await make_lab()

    result = await lab.run(f"return open({str(project / 'secret')!r}).read()")

    assert code_of(result) == "CODE_RUN_FAILED"
    assert "PermissionError: Permission denied" in text_of(result)


async def test_the_outer_abort_stops_everything_and_publishes_inner_results_first(
    make_lab: MakeLab, project: Path
) -> None:
    lab = await make_lab()
    (project / "notes.txt").write_text("hello\n")
    caller = AbortController()
    pre_execute_after_abort: list[str] = []

    async def watch(exec: ToolExecution, next: object) -> Allow:
        if caller.signal.aborted:
            pre_execute_after_abort.append(exec.call_id)
        return Allow()

    lab.ctx.on("tools/pre-execute", watch)
    duration = marker()
    program = (
        "import asyncio\n"
        "await asyncio.gather(\n"
        f"    tools.bash({{'command': 'sleep {duration} & wait', 'description': 'wait'}}),\n"
        "    tools.read({'file_path': 'notes.txt'}),\n"
        ")\n"
        "await tools.nap({'ms': 1})\n"
    )
    running = asyncio.ensure_future(lab.run(program, signal=caller.signal))
    await until(lambda: len(sleeping(duration)) == 1)

    caller.abort()
    result = await running

    assert code_of(result) == "ABORTED"
    assert lab.inner() == [
        ("rc:code:1", "ABORTED"),
        ("rc:code:2", "ABORTED_BEFORE_DISPATCH"),
    ]
    assert [e.call_id for e, _ in lab.results][-1] == "rc"
    assert pre_execute_after_abort == []
    assert sleeping(duration) == []
    assert [alive(pid) for pid in lab.worker_pids] == [False]


async def test_the_outer_timeout_yields_tool_timeout_after_the_inner_results(
    make_lab: MakeLab,
) -> None:
    lab = await make_lab(timeout_ms=500)

    result = await lab.run("await tools.nap({'ms': 30000})")

    assert text_of(result) == "Error: tool call timed out after 500ms"
    assert code_of(result) == "TOOL_TIMEOUT"
    assert [(e.call_id, code_of(r)) for e, r in lab.results] == [
        ("rc:code:1", "ABORTED"),
        ("rc", "TOOL_TIMEOUT"),
    ]
    assert [alive(pid) for pid in lab.worker_pids] == [False]


async def test_logs_and_a_returned_value_are_the_result(make_lab: MakeLab) -> None:
    lab = await make_lab()

    result = await lab.run("print('one')\nprint('two')\nreturn {'n': [1, 2]}")

    assert not result.is_error
    assert result.value == {"logs": ["one", "two"], "result": {"n": [1, 2]}}
    assert text_of(result) == 'one\ntwo\n{\n  "n": [\n    1,\n    2\n  ]\n}'


async def test_a_run_without_output_says_so(make_lab: MakeLab) -> None:
    lab = await make_lab()

    result = await lab.run("x = 1")

    assert text_of(result) == "(run_code completed with no output)"


async def test_a_blank_description_is_refused(make_lab: MakeLab) -> None:
    lab = await make_lab()

    result = await lab.run("return 1", description="  ")

    assert text_of(result) == "Error: invalid description: expected a non-empty string"
    assert lab.worker_pids == []


async def test_a_call_resolves_to_the_tools_canonical_value(
    make_lab: MakeLab, project: Path
) -> None:
    (project / "data.json").write_text(json.dumps({"k": [1, 2, 3]}))
    lab = await make_lab()
    direct = await lab.ctx.tools.execute(
        ToolExecutionInput(
            call_id="direct",
            name="read",
            arguments={"file_path": "data.json"},
            signal=AbortController().signal,
        )
    )

    result = await lab.run("return await tools.read({'file_path': 'data.json'})")

    assert isinstance(result.value, dict)
    assert isinstance(direct.value, dict)
    assert result.value["result"] == direct.value  # type: ignore[union-attr]


async def test_a_permission_deny_rule_blocks_an_inner_bash_call_as_a_top_level_one(
    make_lab: MakeLab, project: Path, tmp_path: Path
) -> None:
    lab = await make_lab()
    await lab.ctx.plugin(
        Permissions,
        {
            "workspace": str(project),
            "claude_settings": False,
            "deny": ["Bash(rm:*)"],
            "allow": ["run_code"],
        },
    )
    await lab.ctx.plugin(Approval)
    session = SessionStore(tmp_path / "sessions").create(cwd=project)
    session.turn_start(1)
    agent = FakeAgent(session)
    try:
        top_level = await call_bash(lab.ctx, "rm -rf build", agent=agent)

        result = await lab.run(
            "try:\n"
            "    await tools.bash({'command': 'rm -rf build', 'description': 'clean'})\n"
            "except ToolCallError as e:\n"
            "    print(e)",
            agent=agent,
        )
    finally:
        session.close()

    assert text_of(top_level) == 'Error: denied by permission rule "Bash(rm:*)"'
    assert text_of(result) == 'bash: denied by permission rule "Bash(rm:*)"'
    assert lab.inner() == [("rc:code:1", "DENIED")]
    ((_, denied),) = [(e, r) for e, r in lab.results if e.call_id == "rc:code:1"]
    assert denied.is_error


async def test_an_exclusive_call_waits_for_earlier_calls_and_holds_later_ones(
    make_lab: MakeLab, project: Path
) -> None:
    lab = await make_lab()
    order: list[str] = []
    lab.ctx.on("tools/result", lambda exec, result: order.append(exec.call_id))

    await lab.run(
        "import asyncio\n"
        "await asyncio.gather(\n"
        "    tools.nap({'ms': 200, 'label': 'before'}),\n"
        "    tools.bash({'command': 'echo hi > marker', 'description': 'touch'}),\n"
        "    tools.nap({'ms': 1, 'label': 'after'}),\n"
        ")"
    )

    assert order == ["rc:code:1", "rc:code:2", "rc:code:3", "rc"]
    assert (project / "marker").read_text() == "hi\n"
    assert lab.naps["before"][1] <= lab.naps["after"][0]


async def test_contexts_and_conclude_turn_of_inner_calls_reach_the_run_code_result(
    make_lab: MakeLab,
) -> None:
    lab = await make_lab()

    async def note(args: object, exec: ToolRunContext) -> str:
        exec.defer_context(user_message("remember this"))
        exec.conclude_turn()
        return "noted"

    lab.ctx.tools.register(
        define_tool(
            name="note",
            description="Leave a note.",
            parameters={"type": "object"},
            output=ToolOutput(),
            execute=note,
        )
    )

    result = await lab.run("return await tools.note({})")

    assert text_of(result) == "noted"
    assert [text_of_message(m) for m in result.additional_contexts] == ["remember this"]
    assert result.concludes_turn  # type: ignore[union-attr]


async def test_without_exception_attributes_the_tool_name_is_the_message_prefix(
    make_lab: MakeLab,
) -> None:
    # Monty 1.4 has no class inheritance and refuses attributes on exception instances, so
    # `ToolCallError` is `RuntimeError` and `toolName` is spelled as the message's prefix.
    lab = await make_lab()

    result = await lab.run(
        "try:\n"
        "    await tools['nap']({'ms': 'soon'})\n"
        "except ToolCallError as e:\n"
        "    return [str(e).split(': ', 1)[0], list(e.args) == [str(e)], hasattr(e, 'toolName')]"
    )

    assert result.value == {"logs": [], "result": ["nap", True, False]}

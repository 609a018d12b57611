"""`tether run --output-format json | stream-json` writes Claude Code's records (issue 26 §4).

Contract: `json` is one `result` record; `stream-json` is `system`/`init` first, an `assistant`
record per model response (Anthropic message: text, thinking and `tool_use` blocks, usage), a
`user` record per tool result (a `tool_result` block, tether's code beside it under `tether`),
`stream_event`s with `--include-partial-messages`, tether's own `system`/`tether_*` records, and
the `result` last. Every record carries `session_id` and a `uuid`. The result's `subtype` is
`success`, `error_max_turns` or `error_during_execution`; `usage` counts cached input as
`cache_read_input_tokens` (OpenAI `prompt_tokens_details.cached_tokens`) and only the rest as
`input_tokens`; a refused call has code `DENIED` and is in `permission_denials`. Every record's
fields are exactly those `docs/output-format.md` documents: this module reads its tables.
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.agent.events import (
    ResponseComplete,
    Retrying,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from tether.agent.llm.prices import DEFAULT_PRICES, ModelPrice, cost_usd
from tether.agent.loop import TurnOutcome
from tether.agent.messages import AssistantMessage, TextBlock, TokenUsage, ToolCallBlock
from tether.cli.output import HeadlessReport, RunInfo
from tether.core.json import JsonValue
from tether.testing.scripted_model import (
    ScriptedModelServer,
    finish,
    http_error,
    reasoning,
    reply,
    text,
    text_reply,
    tool_call,
    usage,
)
from tether.tools.results import ToolSuccess, denial_result, text_content

from ..plugins.mcp._support import TOOLBOX
from ._support import Cli

DOC = Path(__file__).parents[2] / "docs" / "output-format.md"
_SCHEMA = re.compile(r"<!-- schema: (?P<name>\S+) -->\n(?P<table>(?:\|.*\n)+)")


def documented() -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """Per documented record: (the fields tether may write, the ones it always writes)."""
    schemas = {}
    for found in _SCHEMA.finditer(DOC.read_text()):
        fields: set[str] = set()
        always: set[str] = set()
        for row in found["table"].splitlines()[2:]:
            cells = [cell.strip() for cell in row.strip("|").split("|")]
            names = re.findall(r"`([^`]+)`", cells[0])
            if cells[-1] == "—":
                continue
            fields.update(names)
            if cells[-1].startswith("always"):
                always.update(names)
        schemas[found["name"]] = (frozenset(fields), frozenset(always))
    return schemas


SCHEMAS = documented()


def conforms(name: str, record: dict[str, Any]) -> None:
    fields, always = SCHEMAS[name]
    assert set(record) <= fields, f"{name}: undocumented {set(record) - fields}"
    assert always <= set(record), f"{name}: missing {always - set(record)}"


def validate(record: dict[str, Any]) -> str:
    """Check `record` (and what it nests) against the documented tables; its schema name."""
    kind = record["type"]
    name = f"system/{record['subtype']}" if kind == "system" else kind
    conforms(name, record)
    if kind == "assistant":
        conforms("assistant.message", record["message"])
        conforms("result.usage", record["message"]["usage"])
    elif kind == "result":
        conforms("result.usage", record["usage"])
        for usage in record["modelUsage"].values():
            conforms("result.modelUsage.*", usage)
        conforms("result.tether", record["tether"])
        for denial in record["permission_denials"]:
            conforms("result.permission_denials[]", denial)
        for call in record["tether"]["tool_calls"]:
            conforms("result.tether.tool_calls[]", call)
    return name


def bash(command: str, call_id: str) -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": command, "description": "a test command"}))


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def deny_rm(cli: Cli) -> None:
    (cli.work / ".claude").mkdir(exist_ok=True)
    (cli.work / ".claude" / "settings.json").write_text('{"permissions":{"deny":["Bash(rm:*)"]}}')


# -- the documented schema ------------------------------------------------------------------------


def test_the_document_has_a_table_for_every_record() -> None:
    assert set(SCHEMAS) == {
        "system/init",
        "assistant",
        "assistant.message",
        "user",
        "stream_event",
        "system/tether_retry",
        "system/tether_notice",
        "result",
        "result.usage",
        "result.modelUsage.*",
        "result.permission_denials[]",
        "result.tether",
        "result.tether.tool_calls[]",
    }
    assert SCHEMAS["result"][1] >= {
        "type",
        "subtype",
        "session_id",
        "is_error",
        "duration_ms",
        "duration_api_ms",
        "num_turns",
        "total_cost_usd",
        "usage",
        "permission_denials",
    }


@pytest.mark.slow
async def test_every_stream_json_record_has_exactly_the_documented_fields(
    cli: Cli, server: ScriptedModelServer
) -> None:
    deny_rm(cli)
    hooks = cli.work / ".claude" / "hooks"
    hooks.mkdir()
    (hooks / "warn.sh").write_text("#!/bin/sh\ncat > /dev/null\necho 'lint: 2 warnings' >&2\n")
    (hooks / "warn.sh").chmod(0o755)
    settings = json.loads((cli.work / ".claude" / "settings.json").read_text())
    warn = {"type": "command", "command": str(hooks / "warn.sh")}
    settings["hooks"] = {"PostToolUse": [{"matcher": "Bash", "hooks": [warn]}]}
    (cli.work / ".claude" / "settings.json").write_text(json.dumps(settings))
    server.push(
        http_error(503, "busy", headers={"retry-after": "0"}),
        reply(
            reasoning("Look first."),
            text("Checking."),
            tool_call(0, id="call_1", name="bash", arguments=bash("echo hi", "call_1")[2]),
            tool_call(1, id="call_2", name="bash", arguments=bash("rm notes.txt", "call_2")[2]),
            finish("tool_calls"),
            usage(1200, 20, cached_tokens=1000),
        ),
        text_reply("done"),
    )

    done = await cli.run(
        "run",
        "--yolo",
        "--output-format",
        "stream-json",
        "--include-partial-messages",
        "check",
        timeout_s=60,
    )

    assert done.code == 0, done.stderr
    records = lines(done.stdout)
    names = [validate(record) for record in records]
    assert set(names) == {
        "system/init",
        "stream_event",
        "system/tether_retry",
        "assistant",
        "user",
        "system/tether_notice",
        "result",
    }
    assert (names[0], names[-1]) == ("system/init", "result")
    assert {r["session_id"] for r in records} == {cli.sessions()[0].id}
    assert len({r["uuid"] for r in records}) == len(records)


# -- json ------------------------------------------------------------------------------------------


@pytest.mark.slow
async def test_json_is_one_result_record_with_usage_counting_cached_input_apart(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(
        reply(
            tool_call(0, id="call_1", name="bash", arguments=bash("exit 3", "call_1")[2]),
            finish("tool_calls"),
            usage(1200, 5, cached_tokens=1000),
        ),
        reply(text("it failed"), finish("stop"), usage(1300, 7, cached_tokens=1200)),
    )

    done = await cli.run("run", "--yolo", "--output-format", "json", "try", timeout_s=30)

    assert done.code == 0
    (record,) = lines(done.stdout)
    validate(record)
    (summary,) = cli.sessions()
    timing = ("uuid", "duration_ms", "duration_api_ms")
    assert {k: v for k, v in record.items() if k not in timing} == {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 2,
        "result": "it failed",
        "session_id": summary.id,
        "stop_reason": "end_turn",
        "total_cost_usd": None,
        "usage": {
            "input_tokens": 300,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 2200,
            "output_tokens": 12,
            "server_tool_use": {"web_search_requests": 0},
        },
        "modelUsage": {
            "scripted": {
                "inputTokens": 300,
                "outputTokens": 12,
                "cacheReadInputTokens": 2200,
                "cacheCreationInputTokens": 0,
                "webSearchRequests": 0,
                "costUSD": None,
                "contextWindow": None,
                "maxOutputTokens": None,
                "thinkingTokens": 0,
            }
        },
        "permission_denials": [],
        "terminal_reason": "completed",
        "api_error_status": None,
        "tether": {
            "model": "scripted",
            "turn": 1,
            "outcome": {"kind": "completed"},
            "exit_code": 0,
            "tool_calls": [
                {
                    "id": "call_1",
                    "name": "bash",
                    "input": {"command": "exit 3", "description": "a test command"},
                    "is_error": False,
                    "code": None,
                    "duration_ms": record["tether"]["tool_calls"][0]["duration_ms"],
                }
            ],
        },
    }
    assert 0 <= record["duration_api_ms"] <= record["duration_ms"]


@pytest.mark.slow
async def test_a_refused_call_has_code_denied_and_is_a_permission_denial(
    cli: Cli, server: ScriptedModelServer
) -> None:
    deny_rm(cli)
    server.push(
        reply(
            tool_call(0, id="call_1", name="bash", arguments=bash("rm notes.txt", "call_1")[2]),
            finish("tool_calls"),
        ),
        text_reply("I may not."),
    )

    done = await cli.run("run", "--output-format", "json", "remove notes.txt", timeout_s=30)

    (record,) = lines(done.stdout)
    assert record["permission_denials"] == [
        {
            "tool_name": "Bash",
            "tool_use_id": "call_1",
            "tool_input": {"command": "rm notes.txt", "description": "a test command"},
        }
    ]
    (call,) = record["tether"]["tool_calls"]
    assert (call["code"], call["is_error"]) == ("DENIED", True)
    assert (cli.work / "notes.txt").exists()


@pytest.mark.slow
async def test_a_turn_that_fails_is_error_during_execution_and_keeps_the_exit_code(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(http_error(400, "no such thing"))

    done = await cli.run("run", "--output-format", "json", "try", timeout_s=30)

    assert done.code == 1
    (record,) = lines(done.stdout)
    validate(record)
    assert (record["subtype"], record["is_error"], record["tether"]["exit_code"]) == (
        "error_during_execution",
        True,
        1,
    )
    assert "result" not in record
    (error,) = record["errors"]
    assert error.startswith(f"{record['tether']['outcome']['error']['code']}: ")


# -- stream-json -----------------------------------------------------------------------------------


@pytest.mark.slow
async def test_stream_json_is_init_then_claude_code_messages_then_the_result(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(
        reply(
            text("Let me look."),
            tool_call(0, id="call_1", name="bash", arguments=bash("echo hi", "call_1")[2]),
            finish("tool_calls"),
            usage(10, 5),
        ),
        text_reply("done"),
    )

    done = await cli.run("run", "--yolo", "--output-format", "stream-json", "try", timeout_s=30)

    assert done.code == 0
    init, first, result_message, second, result = lines(done.stdout)
    assert (init["type"], init["subtype"], init["model"], init["permissionMode"]) == (
        "system",
        "init",
        "scripted",
        "bypassPermissions",
    )
    assert init["cwd"] == str(cli.work.resolve())
    assert {"Bash", "Read", "Edit", "Write", "Grep", "Glob"} <= set(init["tools"])
    assert first["message"]["content"] == [
        {"type": "text", "text": "Let me look."},
        {
            "type": "tool_use",
            "id": "call_1",
            "name": "Bash",
            "input": {"command": "echo hi", "description": "a test command"},
        },
    ]
    assert (first["message"]["stop_reason"], first["message"]["usage"]["input_tokens"]) == (
        "tool_use",
        10,
    )
    assert result_message["message"] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "hi\n", "is_error": False}
        ],
    }
    assert result_message["tether"]["code"] is None
    assert second["message"]["content"] == [{"type": "text", "text": "done"}]
    assert second["message"]["stop_reason"] == "end_turn"
    assert (result["type"], result["result"], result["num_turns"]) == ("result", "done", 2)


@pytest.mark.slow
async def test_init_lists_the_mcp_servers_and_their_tools_once_they_started(
    cli: Cli, server: ScriptedModelServer
) -> None:
    box = {"command": sys.executable, "args": [TOOLBOX, str(cli.work / "r.jsonl")]}
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": {"box": box}}))
    server.push(text_reply("ok"))

    done = await cli.run("run", "--output-format", "stream-json", "hi", timeout_s=90)

    init = lines(done.stdout)[0]
    assert init["mcp_servers"] == [{"name": "box", "status": "connected"}]
    assert "mcp__box__echo" in init["tools"]


@pytest.mark.slow
async def test_partial_messages_stream_the_text_as_anthropic_stream_events(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(reply(text("Hel"), text("lo"), finish("stop"), usage(10, 2)))

    done = await cli.run(
        "run", "--output-format", "stream-json", "--include-partial-messages", "hi", timeout_s=30
    )

    events = [r["event"] for r in lines(done.stdout) if r["type"] == "stream_event"]
    assert [e["type"] for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert [e["delta"]["text"] for e in events if e["type"] == "content_block_delta"] == [
        "Hel",
        "lo",
    ]
    assert events[5]["delta"]["stop_reason"] == "end_turn"


# -- the report, event by event -------------------------------------------------------------------


def report(fmt: str = "stream-json") -> tuple[HeadlessReport, io.StringIO]:
    out = io.StringIO()
    info = RunInfo(session_id="s1", model="m", cwd="/w", tools=("bash",))
    return HeadlessReport(fmt, info, out, clock=iter(range(100)).__next__), out  # type: ignore[arg-type]


def test_a_turn_out_of_steps_is_error_max_turns() -> None:
    headless, out = report("json")
    headless(StepStarted(1, 1))

    record = headless.finish(TurnOutcome(1, {"kind": "max-steps", "steps": 1}, ""), exit_code=1)

    assert (record["subtype"], record["is_error"], record["errors"]) == (
        "error_max_turns",
        True,
        ["MAX_STEPS: the turn ended after 1 steps"],
    )
    assert json.loads(out.getvalue()) == record


def test_json_writes_nothing_but_the_result() -> None:
    headless, out = report("json")
    headless.start()
    headless(StepStarted(1, 1))
    headless(TextDelta("hi"))

    headless.finish(TurnOutcome(1, {"kind": "completed"}, "hi"), exit_code=0)

    assert [json.loads(line)["type"] for line in out.getvalue().splitlines()] == ["result"]


def test_durations_count_the_run_and_the_time_waiting_for_the_model() -> None:
    headless, _ = report("json")  # the clock ticks once a call: 0 at the start
    headless(StepStarted(1, 1))  # 1
    message = AssistantMessage("a1", (TextBlock("hi"),), {})
    headless(ResponseComplete(1, 1, message, TokenUsage(3, 4), "stop"))  # 2

    record = headless.finish(TurnOutcome(1, {"kind": "completed"}, "hi"), exit_code=0)  # 3

    assert (record["duration_ms"], record["duration_api_ms"]) == (3000, 1000)


def test_a_denied_result_is_listed_with_its_arguments_even_when_they_are_not_json() -> None:
    headless, out = report()
    message = AssistantMessage("a1", (ToolCallBlock("c1", "bash", "{oops"),), {})
    headless(StepStarted(1, 1))
    headless(ResponseComplete(1, 1, message, None, "tool-calls"))
    headless(ToolCallStarted("c1", "bash", "{oops"))
    headless(ToolCallFinished.of("c1", "bash", denial_result("no"), 2.0))

    record = headless.finish(TurnOutcome(1, {"kind": "completed"}, ""), exit_code=0)

    assert record["permission_denials"] == [
        {"tool_name": "Bash", "tool_use_id": "c1", "tool_input": "{oops"}
    ]
    user = [json.loads(line) for line in out.getvalue().splitlines()][1]
    assert user["tether"] == {"tool_name": "bash", "code": "DENIED", "duration_ms": 2}
    assert user["message"]["content"][0]["content"] == "Error: no"


def test_retried_requests_count_in_duration_api_ms_but_not_the_waits_between_them() -> None:
    headless, _ = report("json")  # the clock ticks once a call: 0 at the start
    headless(StepStarted(1, 1))  # 1: the first attempt starts
    headless(Retrying(1, 3, 2000.0, "busy", "SERVER"))  # 2: failed after 1 s; waits 2 s
    headless(Retrying(2, 3, 0.0, "busy", "SERVER"))  # 3: "failed" at 3, before its start at 4

    record = headless.finish(None, exit_code=130)  # 4: aborted while the third attempt waits

    assert record["duration_api_ms"] == 2000


def test_the_cost_comes_from_the_price_table_per_model() -> None:
    out = io.StringIO()
    price = ModelPrice(input=1.0, cached_input=0.5, output=4.0)
    info = RunInfo(session_id="s1", model="m", cwd="/w", price=price)
    headless = HeadlessReport("json", info, out)
    headless(StepStarted(1, 1))
    message = AssistantMessage("a1", (TextBlock("hi"),), {})
    headless(ResponseComplete(1, 1, message, TokenUsage(1_000_000, 500_000, 2_000_000), "stop"))

    record = headless.finish(TurnOutcome(1, {"kind": "completed"}, "hi"), exit_code=0)

    assert record["total_cost_usd"] == 1.0 + 1.0 + 2.0
    model_usage: Any = record["modelUsage"]
    assert model_usage["m"]["costUSD"] == 4.0


def test_the_cost_of_a_model_without_a_price_is_null() -> None:
    headless, _ = report("json")
    headless(StepStarted(1, 1))
    message = AssistantMessage("a1", (TextBlock("hi"),), {})
    headless(ResponseComplete(1, 1, message, TokenUsage(3, 4), "stop"))

    record = headless.finish(TurnOutcome(1, {"kind": "completed"}, "hi"), exit_code=0)

    model_usage: Any = record["modelUsage"]
    assert (record["total_cost_usd"], model_usage["m"]["costUSD"]) == (None, None)


def test_the_built_in_price_table_prices_the_default_models() -> None:
    usage = TokenUsage(1_000_000, 1_000_000)
    assert cost_usd(usage, DEFAULT_PRICES["deepseek-chat"]) == pytest.approx(0.28 + 0.42)
    assert cost_usd(usage, DEFAULT_PRICES["gpt-4o-mini"]) == pytest.approx(0.15 + 0.60)


def test_a_command_past_its_own_timeout_is_an_error_with_code_tool_timeout() -> None:
    headless, out = report()
    headless(ToolCallStarted("c1", "bash", '{"command": "sleep 9"}'))
    value: JsonValue = {
        "kind": "foreground",
        "exit_code": None,
        "signal": "SIGTERM",
        "timed_out": True,
        "aborted": False,
        "timeout_ms": 100,
        "stdout": {"text": "", "truncated": False},
        "stderr": {"text": "", "truncated": False},
    }
    timed_out = ToolSuccess(value, text_content("(no output)\n[timed out after 100ms]"))
    headless(ToolCallFinished.of("c1", "bash", timed_out, 100.0))

    record = headless.finish(TurnOutcome(1, {"kind": "completed"}, ""), exit_code=0)

    (user,) = [json.loads(line) for line in out.getvalue().splitlines()][:-1]
    assert user["message"]["content"][0]["is_error"] is True
    assert (user["tether"]["code"], user["tool_use_result"]["interrupted"]) == (
        "TOOL_TIMEOUT",
        True,
    )
    tether: Any = record["tether"]
    (call,) = tether["tool_calls"]
    assert (call["is_error"], call["code"]) == (True, "TOOL_TIMEOUT")

"""`tether run --output-format json | stream-json` against what the real Claude Code 2.1.328
writes for the same scripted turn (issue 34 item 5).

The captures (`fixtures/claude-code/`, copied from the shared reference captures) are of a turn
in which the model calls `Bash` once (`echo hi-…`, "Say hi") and answers `done`. tether runs the
same turn against the scripted model; every record, and what it nests, must have every key the
real one has, except the ones `MISSING` lists with the reason. Extra keys are allowed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import pytest

from tether.testing.scripted_model import (
    ScriptedModelServer,
    finish,
    reply,
    text,
    tool_call,
    usage,
)

from ._support import Cli

FIXTURES = Path(__file__).parent / "fixtures" / "claude-code"

_FAST_MODE = {"fast_mode_state", "fast_mode_disabled_reason"}  # Anthropic's fast mode
_LATENCY = {"ttft_ms", "ttft_stream_ms", "time_to_request_ms", "first_content_frame_ms"}
_ANTHROPIC_USAGE = {  # service details OpenAI-compatible providers do not report
    "output_tokens_details",
    "service_tier",
    "cache_creation",
    "inference_geo",
    "iterations",
    "speed",
    "fallback_credit",
}
_RESULT = {
    *_FAST_MODE,
    *_LATENCY,
    "subagent_stats",  # Claude Code's subagent counters; tether's are in the session log
    "safety_stops",  # Anthropic's safety classifier
    "queued_turn_count",  # the SDK's queued-turn bookkeeping of Claude Code's own session
    "result_index",
}

MISSING: Final[Mapping[str, frozenset[str]]] = {
    "system/init": frozenset(
        {
            *_FAST_MODE,
            "claude_code_version",  # tether is not Claude Code: no version to compare against
            "memory_paths",  # Claude Code's auto-memory directory; tether has none
            "messaging_socket_path",  # Claude Code's IPC socket
            "per_turn_effort_active",  # Anthropic effort settings
            "ultrathink_available",
            "ultrathink_typed_raises",
            "view_mode",  # the TUI's view
        }
    ),
    "assistant": frozenset(),
    "assistant.message": frozenset(),
    "user": frozenset({"tool_result_meta"}),  # the permission decision is in the session log
    "result": frozenset({*_RESULT, "model_usage_since_last_result"}),
    "result(json)": frozenset(_RESULT),
    "result.usage": frozenset(_ANTHROPIC_USAGE),
    "result.modelUsage.*": frozenset(
        {  # Anthropic's cache tiers and billing basis
            "cacheCreationEphemeral5mInputTokens",
            "cacheCreationEphemeral1hInputTokens",
            "canonicalModel",
            "provider",
            "costBasis",
        }
    ),
}


def _turn(server: ScriptedModelServer) -> None:
    arguments = json.dumps({"command": "echo hi-3601363", "description": "Say hi"})
    server.push(
        reply(
            tool_call(0, id="toolu_1", name="bash", arguments=arguments),
            finish("tool_calls"),
            usage(100, 1),
        ),
        reply(text("done"), finish("stop"), usage(100, 19)),
    )


def _priced(cli: Cli) -> None:
    (cli.work / "tether.yml").write_text(
        "plugins:\n"
        "  - name: tether.agent.llm.plugin\n"
        "    id: llm\n"
        "    config: {prices: {scripted: {input: 5, output: 25}}}\n"
    )


def _name(record: Mapping[str, Any]) -> str:
    kind = str(record["type"])
    return f"system/{record['subtype']}" if kind == "system" else kind


def _gaps(name: str, theirs: Mapping[str, Any], ours: Mapping[str, Any]) -> dict[str, set[str]]:
    """Per record and nested object: the real one's keys tether's lacks, beyond `MISSING`."""
    gaps: dict[str, set[str]] = {}

    def compare(where: str, real: Mapping[str, Any], mine: Mapping[str, Any]) -> None:
        lacking = set(real) - set(mine) - MISSING.get(where, frozenset())
        if lacking:
            gaps[where] = lacking

    compare(name, theirs, ours)
    if "message" in theirs and name == "assistant":
        compare("assistant.message", theirs["message"], ours["message"])
    if name.startswith("result"):
        compare("result.usage", theirs["usage"], ours["usage"])
        (real_model,) = theirs["modelUsage"].values()
        (my_model,) = ours["modelUsage"].values()
        compare("result.modelUsage.*", real_model, my_model)
    return gaps


@pytest.mark.slow
async def test_stream_json_has_every_key_of_claude_codes_records_for_the_same_turn(
    cli: Cli, server: ScriptedModelServer
) -> None:
    _priced(cli)
    _turn(server)

    done = await cli.run(
        "run", "--yolo", "--output-format", "stream-json", "--verbose", "say hi", timeout_s=60
    )

    assert done.code == 0, done.stderr
    ours = [json.loads(line) for line in done.stdout.splitlines()]
    theirs = [
        json.loads(line) for line in (FIXTURES / "run-stream-json.jsonl").read_text().splitlines()
    ]
    assert [_name(r) for r in ours] == [_name(r) for r in theirs]
    gaps: dict[str, set[str]] = {}
    for real, mine in zip(theirs, ours, strict=True):
        gaps.update(_gaps(_name(real), real, mine))
    assert gaps == {}


@pytest.mark.slow
async def test_json_has_every_key_of_claude_codes_result_and_its_cost(
    cli: Cli, server: ScriptedModelServer
) -> None:
    _priced(cli)
    _turn(server)

    done = await cli.run("run", "--yolo", "--output-format", "json", "say hi", timeout_s=60)

    assert done.code == 0, done.stderr
    (ours,) = [json.loads(line) for line in done.stdout.splitlines()]
    theirs = json.loads((FIXTURES / "run-json.json").read_text())
    assert _gaps("result(json)", theirs, ours) == {}
    assert (ours["stop_reason"], ours["terminal_reason"]) == ("end_turn", "completed")
    assert ours["total_cost_usd"] == pytest.approx((200 * 5 + 20 * 25) / 1_000_000)
    assert ours["modelUsage"]["scripted"]["inputTokens"] == 200


@pytest.mark.slow
async def test_tool_names_are_claude_codes_in_every_record(
    cli: Cli, server: ScriptedModelServer
) -> None:
    _turn(server)

    done = await cli.run("run", "--yolo", "--output-format", "stream-json", "hi", timeout_s=60)

    init, call, *_ = [json.loads(line) for line in done.stdout.splitlines()]
    assert {"Bash", "Read", "Write", "Edit", "Grep", "Glob"} <= set(init["tools"])
    assert not {"bash", "read"} & set(init["tools"])
    assert call["message"]["content"][0]["name"] == "Bash"


@pytest.mark.slow
async def test_a_command_past_its_timeout_is_tool_timeout_in_json(
    cli: Cli, server: ScriptedModelServer
) -> None:
    arguments = json.dumps({"command": "sleep 30", "timeout_ms": 200, "description": "wait"})
    server.push(
        reply(tool_call(0, id="call_1", name="bash", arguments=arguments), finish("tool_calls")),
        reply(text("it timed out"), finish("stop")),
    )

    done = await cli.run("run", "--yolo", "--output-format", "json", "wait", timeout_s=60)

    (record,) = [json.loads(line) for line in done.stdout.splitlines()]
    (call,) = record["tether"]["tool_calls"]
    assert (call["is_error"], call["code"]) == (True, "TOOL_TIMEOUT")

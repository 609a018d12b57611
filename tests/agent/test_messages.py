"""The message and stream vocabulary (spec §1.5).

Contract: `BlockAssembler` orders blocks by first-seen index; `block-end` is authoritative and
freezes its block; delta-only streams are tolerated (a tool call without an id becomes
`call-<index>`); a `max-tokens` finish drops every tool call; a stream without a finish reads as
`stop`; chunks after the finish are ignored; interrupted blocks are the non-blank text/reasoning
blocks. Messages and chunks round-trip through their JSON forms exactly.
"""

import pytest

from tether.agent.assembly import BlockAssembler
from tether.agent.messages import (
    AssistantMessage,
    BlockEnd,
    BlockStart,
    Finish,
    LlmFailure,
    ReasoningBlock,
    ReasoningDelta,
    StreamChunk,
    TextBlock,
    TextDelta,
    TokenUsage,
    ToolCallBlock,
    ToolCallDelta,
    ToolResultMessage,
    UsageChunk,
    assistant_message,
    chunk_from_json,
    chunk_to_json,
    message_from_json,
    message_to_json,
    tool_result_message,
)
from tether.tools.results import ErrorDetail, ErrorInfo, ToolFailure, user_message


def assemble(*chunks: StreamChunk) -> BlockAssembler:
    assembler = BlockAssembler()
    for chunk in chunks:
        assembler.feed(chunk)
    return assembler


def test_streamed_text_reasoning_and_tool_calls_assemble_in_first_seen_order() -> None:
    result = assemble(
        BlockStart(0, "reasoning"),
        ReasoningDelta(0, "think "),
        ReasoningDelta(0, "hard"),
        BlockStart(1, "text"),
        TextDelta(1, "Hel"),
        BlockStart(2, "tool-call"),
        ToolCallDelta(2, "call_1", "read", '{"pa'),
        TextDelta(1, "lo"),
        ToolCallDelta(2, "", "", 'th": "a"}'),
        UsageChunk(TokenUsage(10, 3)),
        Finish("tool-calls"),
    )
    assert result.blocks() == (
        ReasoningBlock("think hard"),
        TextBlock("Hello"),
        ToolCallBlock("call_1", "read", '{"path": "a"}'),
    )
    assert result.finish == Finish("tool-calls")
    assert result.usage == TokenUsage(10, 3)


def test_block_end_is_authoritative_and_freezes_its_block() -> None:
    result = assemble(
        TextDelta(0, "draft"),
        BlockEnd(0, TextBlock("final")),
        TextDelta(0, " ignored"),
        Finish("stop"),
    )
    assert result.blocks() == (TextBlock("final"),)


def test_a_delta_only_tool_call_without_an_id_gets_call_index() -> None:
    result = assemble(ToolCallDelta(3, "", "bash", "{}"), Finish("tool-calls"))
    assert result.blocks() == (ToolCallBlock("call-3", "bash", "{}"),)


def test_a_max_tokens_finish_drops_every_tool_call() -> None:
    result = assemble(
        TextDelta(0, "I will run"),
        ToolCallDelta(1, "c1", "bash", '{"comm'),
        Finish("max-tokens"),
    )
    assert result.blocks() == (TextBlock("I will run"),)
    message = result.message(provider="p", model="m")
    assert message.tool_calls == ()


def test_a_stream_without_a_finish_reads_as_stop() -> None:
    result = assemble(TextDelta(0, "hi"))
    assert result.finished is False
    assert result.finish == Finish("stop")


def test_chunks_after_the_finish_are_ignored() -> None:
    result = assemble(TextDelta(0, "a"), Finish("stop"), TextDelta(0, "b"), Finish("max-tokens"))
    assert result.blocks() == (TextBlock("a"),)
    assert result.finish == Finish("stop")


def test_interrupted_blocks_keep_only_text_and_reasoning_with_visible_text() -> None:
    result = assemble(
        ReasoningDelta(0, "  \n"),
        TextDelta(1, "partial answer"),
        ToolCallDelta(2, "c1", "bash", "{}"),
    )
    assert result.interrupted_blocks() == (TextBlock("partial answer"),)


def test_a_finish_carries_a_failure_exactly_when_it_is_aborted_or_error() -> None:
    failure = LlmFailure("boom", "SERVER", status=500)
    assert Finish("error", failure).failure == failure
    with pytest.raises(ValueError, match="failure only for aborted and error"):
        Finish("error")
    with pytest.raises(ValueError, match="failure only for aborted and error"):
        Finish("stop", failure)


def test_messages_round_trip_through_their_json_form() -> None:
    user = user_message("hello")
    assistant = assistant_message(
        [ReasoningBlock("r"), TextBlock("t"), ToolCallBlock("c1", "read", '{"path":"x"}')],
        provider="deepseek",
        model="deepseek-chat",
    )
    result = tool_result_message("c1", "file body")
    for message in (user, assistant, result):
        assert message_from_json(message_to_json(message)) == message
    assert message_to_json(result) == {
        "id": result.id,
        "role": "user",
        "content": [
            {
                "type": "tool-result",
                "call_id": "c1",
                "content": [{"type": "text", "text": "file body"}],
                "is_error": False,
            }
        ],
        "source": {"kind": "tool", "call_id": "c1"},
    }
    assert message_to_json(assistant)["source"] == {
        "kind": "model",
        "provider": "deepseek",
        "model": "deepseek-chat",
    }


def test_a_tool_result_message_from_a_failure_keeps_its_content_and_error_flag() -> None:
    failure = ToolFailure(
        ErrorDetail("tool call aborted", ErrorInfo("AbortError", "ABORTED")),
        [{"type": "text", "text": "Error: tool call aborted"}],
    )
    message = tool_result_message("c9", failure)
    assert isinstance(message, ToolResultMessage)
    assert message.is_error is True
    assert message.content == [{"type": "text", "text": "Error: tool call aborted"}]
    assert message.source == {"kind": "tool", "call_id": "c9"}


def test_every_chunk_kind_round_trips_through_its_json_form() -> None:
    chunks: list[StreamChunk] = [
        BlockStart(0, "tool-call"),
        TextDelta(1, "x"),
        ReasoningDelta(2, "y"),
        ToolCallDelta(0, "c1", None, "{"),
        ToolCallDelta(0, "", "read", "}"),
        BlockEnd(0, ToolCallBlock("c1", "read", "{}")),
        UsageChunk(TokenUsage(5, 6, cache_read_tokens=7, reasoning_tokens=8)),
        Finish("stop"),
        Finish("error", LlmFailure("slow", "RATE_LIMIT", 429, 1000.0, "req-1")),
        Finish("aborted", LlmFailure("stopped", "ABORTED")),
    ]
    assert [chunk_from_json(chunk_to_json(c)) for c in chunks] == chunks


def test_reading_a_malformed_message_names_the_bad_field() -> None:
    with pytest.raises(ValueError, match=r"message\.content\[0\]\.type 'video'"):
        message_from_json(
            {"id": "m", "role": "assistant", "content": [{"type": "video"}], "source": {}}
        )
    with pytest.raises(ValueError, match=r"message\.id is missing"):
        message_from_json({"role": "user", "content": [], "source": {}})


def test_assistant_message_properties_join_their_blocks() -> None:
    message = AssistantMessage(
        "m1",
        (TextBlock("a"), ReasoningBlock("r"), TextBlock("b"), ToolCallBlock("c", "n", "{}")),
        {"kind": "model", "provider": "p", "model": "m"},
    )
    assert (message.text, message.reasoning) == ("ab", "r")
    assert message.tool_calls == (ToolCallBlock("c", "n", "{}"),)

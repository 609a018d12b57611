"""The LLM seam and the OpenAI-compatible adapter, against a scripted server over real HTTP.

Contract (spec §9.7-9.9, issue 6): `Llm.stream` yields the adapter's chunks and ends in exactly one
`Finish`; every failure becomes that finish (`aborted` with code `ABORTED` when the caller's signal
aborted, `error` otherwise). Text, DeepSeek `reasoning_content` and tool-call deltas are assembled;
`length` drops tool calls. An idle stream fails as `LLM_STREAM_IDLE_TIMEOUT`; an abort mid-stream
closes the HTTP stream (the server sees the disconnect). HTTP errors map to stable codes (401 ->
`AUTH` naming the key's variable, 429 -> `RATE_LIMIT`, 5xx -> `SERVER`); `generate` retries the
retryable ones per `RetryPolicy`, never after an abort, and never 401.
"""

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator

import pytest

import tether.agent.llm.plugin as llm_plugin
from tether.agent.llm import (
    Llm,
    LlmConfig,
    LlmError,
    LlmRequest,
    OpenAICompatibleTransport,
    RetryNotice,
    RetryPolicy,
    resolve_route,
)
from tether.agent.llm.openai import check_credential
from tether.agent.llm.sse import SseDecoder, SseEvent
from tether.agent.messages import (
    BlockEnd,
    Finish,
    LlmFailure,
    ReasoningBlock,
    StreamChunk,
    TextBlock,
    TextDelta,
    TokenUsage,
    ToolCallBlock,
    assistant_message,
    tool_result_message,
)
from tether.core.signals import AbortController, AbortSignal
from tether.kernel import Context
from tether.testing.scripted_model import (
    RecordedRequest,
    ScriptedModelServer,
    ScriptedResponse,
    comment,
    delay,
    drop,
    end,
    finish,
    hang,
    http_error,
    raw,
    reply,
    text,
    text_reply,
    tool_call,
    tool_calls_reply,
    usage,
)
from tether.tools.results import user_message

FAST_RETRY = RetryPolicy(max_retries=2, initial_delay_ms=1, max_delay_ms=2)
NO_RETRY = RetryPolicy(mode="off")
HELLO = LlmRequest(messages=[user_message("hello")])


@pytest.fixture
async def server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as scripted:
        yield scripted


def make_llm(server: ScriptedModelServer, retry: RetryPolicy = NO_RETRY, **config: object) -> Llm:
    route = resolve_route(
        LlmConfig.model_validate({"provider": "deepseek", "base_url": server.base_url, **config}),
        {"DEEPSEEK_API_KEY": "sk-test"},
    )
    return Llm(
        OpenAICompatibleTransport(route), provider=route.provider, model=route.model, retry=retry
    )


@pytest.fixture
async def llm(server: ScriptedModelServer) -> AsyncIterator[Llm]:
    model = make_llm(server)
    yield model
    await model.aclose()


async def collect(llm: Llm, request: LlmRequest, signal: AbortSignal) -> list[StreamChunk]:
    return [chunk async for chunk in llm.stream(request, signal=signal)]


async def test_streamed_text_and_tool_calls_are_assembled(
    server: ScriptedModelServer, llm: Llm
) -> None:
    server.push(
        reply(
            text("Let me "),
            text("look."),
            tool_call(0, id="call_a", name="read", arguments='{"path":'),
            tool_call(1, id="call_b", name="bash", arguments='{"command": "ls"}'),
            tool_call(0, arguments=' "a.txt"}'),
            finish("tool_calls"),
            usage(100, 20, cached_tokens=60),
        )
    )
    result = await llm.generate(HELLO, signal=AbortController().signal)
    assert result.message.content == (
        TextBlock("Let me look."),
        ToolCallBlock("call_a", "read", '{"path": "a.txt"}'),
        ToolCallBlock("call_b", "bash", '{"command": "ls"}'),
    )
    assert result.message.source == {
        "kind": "model",
        "provider": "deepseek",
        "model": "deepseek-chat",
    }
    assert result.finish == Finish("tool-calls")
    assert result.usage == TokenUsage(input_tokens=40, output_tokens=20, cache_read_tokens=60)
    assert result.retries == 0


async def test_deepseeks_cache_hit_and_miss_counts_are_read(
    server: ScriptedModelServer, llm: Llm
) -> None:
    counts = {
        "prompt_tokens": 1200,
        "completion_tokens": 7,
        "prompt_cache_hit_tokens": 1000,
        "prompt_cache_miss_tokens": 200,
    }
    server.push(
        reply(
            text("ok"),
            finish("stop"),
            raw(f"data: {json.dumps({'choices': [], 'usage': counts})}\n\n"),
        )
    )

    result = await llm.generate(HELLO, signal=AbortController().signal)

    assert result.usage == TokenUsage(input_tokens=200, output_tokens=7, cache_read_tokens=1000)


async def test_the_stream_emits_block_ends_usage_and_one_finish_after_done(
    server: ScriptedModelServer, llm: Llm
) -> None:
    server.push(text_reply("Hi", pieces=2))
    chunks = await collect(llm, HELLO, AbortController().signal)
    assert [type(c).__name__ for c in chunks] == [
        "BlockStart",
        "TextDelta",
        "TextDelta",
        "BlockEnd",
        "UsageChunk",
        "Finish",
    ]
    assert chunks[3] == BlockEnd(0, TextBlock("Hi"))
    assert chunks[-1] == Finish("stop")


async def test_deepseek_reasoning_content_becomes_a_reasoning_block(
    server: ScriptedModelServer, llm: Llm
) -> None:
    server.push(text_reply("42", reasoning_text="six times seven"))
    result = await llm.generate(HELLO, signal=AbortController().signal)
    assert result.message.content == (ReasoningBlock("six times seven"), TextBlock("42"))


async def test_the_request_body_carries_system_history_tools_and_reasoning_back(
    server: ScriptedModelServer, llm: Llm
) -> None:
    server.push(text_reply("done"))
    history = [
        user_message("list files"),
        assistant_message(
            [ReasoningBlock("use bash"), ToolCallBlock("c1", "bash", '{"command":"ls"}')],
            provider="deepseek",
            model="deepseek-chat",
        ),
        tool_result_message("c1", "a.txt"),
        tool_result_message("c2", []),
    ]
    tools = [{"name": "bash", "description": "run", "parameters": {"type": "object"}}]
    request = LlmRequest(
        messages=history, system="be brief", tools=tools, max_tokens=64, temperature=0.5
    )
    await llm.generate(request, signal=AbortController().signal)
    body = server.requests[0].body
    assert body == {
        "model": "deepseek-chat",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "list files"},
            {
                "role": "assistant",
                "content": "",
                "reasoning_content": "use bash",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command":"ls"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
            {"role": "tool", "tool_call_id": "c2", "content": "(no output)"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "bash",
                    "description": "run",
                    "parameters": {"type": "object"},
                },
            }
        ],
        "max_tokens": 64,
        "temperature": 0.5,
    }
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"


async def test_a_lone_surrogate_in_the_history_is_sent_as_an_escape(
    server: ScriptedModelServer, llm: Llm
) -> None:
    server.push(text_reply("done"))
    history = [user_message("fetch \ud800"), tool_result_message("c1", "invalid URL: \ud800")]
    await llm.generate(LlmRequest(messages=history), signal=AbortController().signal)
    assert server.requests[0].body["messages"] == [
        {"role": "user", "content": "fetch \\ud800"},
        {"role": "tool", "tool_call_id": "c1", "content": "invalid URL: \\ud800"},
    ]


async def test_a_length_finish_drops_the_tool_calls(server: ScriptedModelServer, llm: Llm) -> None:
    server.push(
        reply(
            text("Running"), tool_call(0, id="c1", name="bash", arguments='{"co'), finish("length")
        )
    )
    result = await llm.generate(HELLO, signal=AbortController().signal)
    assert result.finish == Finish("max-tokens")
    assert result.message.content == (TextBlock("Running"),)


async def test_an_idle_stream_times_out_as_llm_stream_idle_timeout(
    server: ScriptedModelServer,
) -> None:
    llm = make_llm(server, stream_idle_timeout_ms=200)
    server.push(reply(text("Hel"), hang()))
    try:
        chunks = await collect(llm, HELLO, AbortController().signal)
    finally:
        await llm.aclose()
    assert chunks[-1] == Finish(
        "error",
        LlmFailure(
            "DeepSeek API stream idle timeout after 200ms (no data from the server; raise"
            " stream_idle_timeout_ms in the llm plugin config if the model is just slow)",
            "LLM_STREAM_IDLE_TIMEOUT",
        ),
    )
    exchange = await server.requests[0].ended()
    assert exchange.client_disconnected is True


async def test_sse_comments_keep_a_slow_stream_alive(server: ScriptedModelServer) -> None:
    llm = make_llm(server, stream_idle_timeout_ms=300)
    keepalive = [event for _ in range(4) for event in (delay(120), comment())]
    server.push(reply(text("a"), *keepalive, text("b"), finish("stop")))
    try:
        result = await llm.generate(HELLO, signal=AbortController().signal)
    finally:
        await llm.aclose()
    assert result.message.content == (TextBlock("ab"),)


async def test_an_abort_mid_stream_ends_aborted_and_closes_the_http_stream(
    server: ScriptedModelServer, llm: Llm
) -> None:
    server.push(reply(text("Hel"), hang()))
    controller = AbortController()
    chunks: list[StreamChunk] = []
    async for chunk in llm.stream(HELLO, signal=controller.signal):
        chunks.append(chunk)
        if isinstance(chunk, TextDelta):  # abort while the next read is outstanding
            asyncio.get_running_loop().call_soon(controller.abort)
    assert chunks[-1] == Finish(
        "aborted", LlmFailure("DeepSeek API request aborted by caller", "ABORTED")
    )
    exchange = await (await server.request(0)).ended()
    assert exchange.client_disconnected is True
    assert exchange.completed is False


async def test_closing_the_stream_early_closes_the_http_stream(
    server: ScriptedModelServer, llm: Llm
) -> None:
    server.push(reply(text("Hel"), hang()))
    chunks = llm.stream(HELLO, signal=AbortController().signal)
    async with contextlib.aclosing(chunks):
        async for chunk in chunks:
            if isinstance(chunk, TextDelta):
                break
    exchange = await server.requests[0].ended()
    assert exchange.client_disconnected is True


class FailingTransport:
    def __init__(self, error: Exception | None) -> None:
        self.error = error

    async def stream(
        self, request: LlmRequest, *, signal: AbortSignal
    ) -> AsyncGenerator[StreamChunk, None]:
        yield TextDelta(0, "x")
        if self.error is not None:
            raise self.error

    async def aclose(self) -> None:
        pass


async def test_a_custom_transport_failure_becomes_one_error_finish() -> None:
    llm = Llm(FailingTransport(KeyError("boom")), provider="custom", model="m")
    chunks = await collect(llm, HELLO, AbortController().signal)
    assert chunks == [TextDelta(0, "x"), Finish("error", LlmFailure("boom", "UNKNOWN"))]


async def test_a_transport_that_ends_without_a_finish_gets_stop() -> None:
    llm = Llm(FailingTransport(None), provider="custom", model="m")
    chunks = await collect(llm, HELLO, AbortController().signal)
    assert chunks == [TextDelta(0, "x"), Finish("stop")]


async def test_generate_raises_aborted_with_the_partial_text(
    server: ScriptedModelServer, llm: Llm
) -> None:
    server.push(reply(text("partial"), hang()))
    controller = AbortController()

    def on_chunk(chunk: StreamChunk) -> None:
        if isinstance(chunk, TextDelta):
            asyncio.get_running_loop().call_soon(controller.abort)

    with pytest.raises(LlmError) as caught:
        await llm.generate(HELLO, signal=controller.signal, on_chunk=on_chunk)
    assert caught.value.code == "ABORTED"
    assert caught.value.partial is not None
    assert caught.value.partial.content == (TextBlock("partial"),)


async def test_an_already_aborted_signal_sends_no_request(
    server: ScriptedModelServer, llm: Llm
) -> None:
    controller = AbortController()
    controller.abort()
    chunks = await collect(llm, HELLO, controller.signal)
    assert chunks == [Finish("aborted", LlmFailure("model request aborted by caller", "ABORTED"))]
    assert server.requests == []


async def test_429_and_500_are_retried_then_surfaced(server: ScriptedModelServer) -> None:
    server.push(http_error(429, "slow down"), http_error(500, "oops"), http_error(503, "down"))
    llm = make_llm(server, FAST_RETRY)
    notices: list[tuple[str, RetryNotice]] = []
    try:
        with pytest.raises(LlmError) as caught:
            await llm.generate(
                HELLO,
                signal=AbortController().signal,
                on_retry=lambda n: notices.append(("retry", n)),
                on_retry_started=lambda n: notices.append(("started", n)),
            )
    finally:
        await llm.aclose()
    assert [(kind, n.retry, n.failure.code, n.failure.status) for kind, n in notices] == [
        ("retry", 1, "RATE_LIMIT", 429),
        ("started", 1, "RATE_LIMIT", 429),
        ("retry", 2, "SERVER", 500),
        ("started", 2, "SERVER", 500),
    ]
    assert (caught.value.code, caught.value.status) == ("SERVER", 503)
    assert caught.value.message == "DeepSeek API error (HTTP 503): down"
    assert len(server.requests) == 3


async def test_a_retried_request_succeeds_with_the_same_body(server: ScriptedModelServer) -> None:
    server.push(http_error(500), text_reply("ok"))
    llm = make_llm(server, FAST_RETRY)
    try:
        result = await llm.generate(HELLO, signal=AbortController().signal)
    finally:
        await llm.aclose()
    assert result.retries == 1
    assert result.message.text == "ok"
    assert server.requests[0].body == server.requests[1].body


async def test_401_is_not_retried_and_names_the_key_variable(server: ScriptedModelServer) -> None:
    server.push(http_error(401, "Authentication Fails (invalid key)"))
    llm = make_llm(server, FAST_RETRY)
    try:
        with pytest.raises(LlmError) as caught:
            await llm.generate(HELLO, signal=AbortController().signal)
    finally:
        await llm.aclose()
    assert caught.value.code == "AUTH"
    assert caught.value.message == (
        "DeepSeek API error (HTTP 401): Authentication Fails (invalid key); the API key comes"
        f" from DEEPSEEK_API_KEY: set it to a valid key for {server.base_url}"
    )
    assert len(server.requests) == 1


async def test_an_abort_during_retry_backoff_ends_the_retries(server: ScriptedModelServer) -> None:
    server.push(http_error(500), text_reply("never"))
    llm = make_llm(server, RetryPolicy(initial_delay_ms=60_000, max_delay_ms=60_000))
    controller = AbortController()
    started: list[RetryNotice] = []
    try:
        with pytest.raises(LlmError) as caught:
            await llm.generate(
                HELLO,
                signal=controller.signal,
                on_retry=lambda _notice: controller.abort(),
                on_retry_started=started.append,
            )
    finally:
        await llm.aclose()
    assert caught.value.code == "ABORTED"
    assert started == []
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("response", "code", "message"),
    [
        (reply(text("a"), end()), "STREAM_CLOSED", "SSE stream ended without [DONE]"),
        (
            reply(raw("data: {not json\n\n")),
            "MALFORMED_RESPONSE",
            "malformed SSE payload: {not json",
        ),
        (
            reply(finish("stop")),
            "EMPTY_RESPONSE",
            "model returned a completed response with no content",
        ),
        (
            reply(raw('data: {"error": {"message": "overloaded", "type": "server"}}\n\n')),
            "PROVIDER_ERROR",
            "provider error in the stream: overloaded",
        ),
        (reply(finish("content_filter")), "CONTENT_FILTER", "model stopped: content_filter"),
        (
            http_error(400, "This model's maximum context length is 65536 tokens"),
            "CONTEXT_WINDOW_EXCEEDED",
            "DeepSeek API error (HTTP 400): This model's maximum context length is 65536 tokens;"
            " the conversation no longer fits the model's context window",
        ),
        (
            http_error(402, "Insufficient Balance"),
            "QUOTA",
            "DeepSeek API error (HTTP 402): Insufficient Balance; the account is out of quota or"
            " balance: top it up at the provider",
        ),
    ],
)
async def test_stream_and_http_failures_map_to_stable_codes(
    server: ScriptedModelServer, llm: Llm, response: object, code: str, message: str
) -> None:
    server.push(response)  # type: ignore[arg-type]
    chunks = await collect(llm, HELLO, AbortController().signal)
    final = chunks[-1]
    assert isinstance(final, Finish)
    assert final.kind == "error"
    assert final.failure is not None
    assert (final.failure.code, final.failure.message) == (code, message)


async def test_a_dropped_connection_is_a_transport_failure(
    server: ScriptedModelServer, llm: Llm
) -> None:
    server.push(reply(text("a"), drop()))
    chunks = await collect(llm, HELLO, AbortController().signal)
    final = chunks[-1]
    assert isinstance(final, Finish)
    assert final.failure is not None
    assert final.failure.code == "TRANSPORT"
    assert final.failure.message.startswith(f"DeepSeek API stream from {server.base_url} failed")


async def test_retry_after_and_request_id_are_captured(
    server: ScriptedModelServer, llm: Llm
) -> None:
    server.push(http_error(429, headers={"retry-after": "3", "x-request-id": "req-7"}))
    chunks = await collect(llm, HELLO, AbortController().signal)
    assert chunks[-1] == Finish(
        "error",
        LlmFailure(
            "DeepSeek API error (HTTP 429): scripted HTTP 429; rate limited by the provider",
            "RATE_LIMIT",
            status=429,
            retry_after_ms=3000.0,
            request_id="req-7",
        ),
    )


async def test_a_missing_key_fails_before_any_request(server: ScriptedModelServer) -> None:
    route = resolve_route(LlmConfig(provider="deepseek", base_url=server.base_url), {})
    llm = Llm(OpenAICompatibleTransport(route), provider="deepseek", model=route.model)
    chunks = await collect(llm, HELLO, AbortController().signal)
    await llm.aclose()
    assert chunks == [
        Finish(
            "error",
            LlmFailure(
                'llm: no API key for provider "deepseek"; export DEEPSEEK_API_KEY in the'
                " launching environment (or set api_key_env in the llm plugin config)",
                "MISSING_CREDENTIAL",
            ),
        )
    ]
    assert server.requests == []


def test_with_no_model_configured_the_error_names_every_way_to_configure_one() -> None:
    route = resolve_route(LlmConfig(), {})

    with pytest.raises(LlmError) as raised:
        check_credential(route)

    assert (raised.value.code, str(raised.value)) == (
        "MISSING_CREDENTIAL",
        "llm: no model is configured; export DEEPSEEK_API_KEY (DeepSeek), OPENAI_API_KEY "
        "(OpenAI), or OPENAI_BASE_URL for any OpenAI-compatible server (vLLM, Ollama, LM "
        "Studio; OPENAI_MODEL names the model, OPENAI_API_KEY if it needs one), or configure "
        "the llm plugin in tether.yml",
    )


async def test_a_404_names_the_model_and_where_it_came_from(server: ScriptedModelServer) -> None:
    server.push(http_error(404, "Model Not Exist"))
    llm = make_llm(server, model="deepseek-nope")
    try:
        chunks = await collect(llm, HELLO, AbortController().signal)
    finally:
        await llm.aclose()
    final = chunks[-1]
    assert isinstance(final, Finish)
    assert final.failure is not None
    assert final.failure.code == "HTTP_404"
    assert final.failure.message == (
        'DeepSeek API error (HTTP 404): Model Not Exist; check the model name "deepseek-nope"'
        f" (the llm plugin config (model)) and the base URL {server.base_url} (the llm plugin"
        " config (base_url))"
    )


async def test_the_llm_plugin_provides_ctx_llm_and_closes_it_on_dispose(
    server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_MODEL", "local-model")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    server.push(text_reply("from plugin"))
    ctx = Context()
    handle = await ctx.plugin(llm_plugin, {"stream_idle_timeout_ms": 5000})
    llm = ctx.llm
    assert (llm.provider, llm.model) == ("openai", "local-model")
    result = await llm.generate(HELLO, signal=AbortController().signal)
    assert result.message.text == "from plugin"
    assert server.requests[0].body["model"] == "local-model"
    await handle.dispose()
    assert ctx.get("llm") is None


async def test_a_scripted_response_can_be_built_from_the_recorded_request(
    server: ScriptedModelServer, llm: Llm
) -> None:
    def echo_tools(request: RecordedRequest) -> ScriptedResponse:
        calls = [
            (f"c{i}", tool["function"]["name"], "{}")
            for i, tool in enumerate(request.body["tools"])
        ]
        return tool_calls_reply(*calls, content="Calling.")

    server.push(echo_tools)
    tools = [{"name": n, "description": "", "parameters": {"type": "object"}} for n in ("a", "b")]
    result = await llm.generate(
        LlmRequest(messages=[user_message("go")], tools=tools), signal=AbortController().signal
    )
    assert result.message.content == (
        TextBlock("Calling."),
        ToolCallBlock("c0", "a", "{}"),
        ToolCallBlock("c1", "b", "{}"),
    )
    later = await collect(llm, HELLO, AbortController().signal)
    assert later[-1] == Finish(
        "error",
        LlmFailure(
            "DeepSeek API error (HTTP 500): scripted model: no response scripted for request #1"
            " (POST /v1/chat/completions)",
            "SERVER",
            status=500,
        ),
    )


def test_sse_framing_handles_split_bytes_crlf_comments_and_multiline_data() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b'data: {"a"') == []
    assert decoder.feed(b": 1}\r\n\r\n: keep-alive\n\nevent: x\ndata: one\ndata: two\n") == [
        SseEvent('{"a": 1}')
    ]
    assert decoder.pending is True
    assert decoder.feed(b"\n" + "data: é".encode()[:-1]) == [SseEvent("one\ntwo", "x")]
    assert decoder.feed("data: é".encode()[-1:] + b"\n\n") == [SseEvent("é")]


def test_routes_resolve_from_config_then_environment() -> None:
    deepseek = resolve_route(LlmConfig(), {"DEEPSEEK_API_KEY": "k"})
    assert (deepseek.provider, deepseek.base_url, deepseek.model) == (
        "deepseek",
        "https://api.deepseek.com",
        "deepseek-chat",
    )
    assert deepseek.replay_reasoning is True
    local = resolve_route(LlmConfig(), {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1/"})
    assert (local.provider, local.base_url, local.key_required) == (
        "openai",
        "http://127.0.0.1:8000/v1",
        False,
    )
    assert local.replay_reasoning is False
    explicit = resolve_route(
        LlmConfig(provider="openai", model="m", api_key_env="MY_KEY"), {"MY_KEY": "k2"}
    )
    assert (explicit.api_key, explicit.api_key_ref, explicit.model) == ("k2", "MY_KEY", "m")
    assert "k2" not in repr(explicit)


def test_the_backoff_follows_the_spec_formula_and_honours_retry_after() -> None:
    policy = RetryPolicy()
    server_error = LlmFailure("x", "SERVER")
    assert policy.delay_ms(server_error, 1, random=lambda: 0.0) == 450
    assert policy.delay_ms(server_error, 2, random=lambda: 1.0) == 1100
    assert policy.delay_ms(server_error, 6) is None  # past max_retries
    assert policy.delay_ms(LlmFailure("x", "AUTH"), 1) is None
    assert policy.delay_ms(LlmFailure("x", "ABORTED"), 1) is None
    throttled = LlmFailure("x", "RATE_LIMIT", retry_after_ms=2000)
    assert policy.delay_ms(throttled, 1) == 2000
    too_long = LlmFailure("x", "RATE_LIMIT", retry_after_ms=60_000)
    assert policy.delay_ms(too_long, 1) is None
    assert RetryPolicy(mode="always").delay_ms(too_long, 9, random=lambda: 0.5) == 10_000
    assert (
        RetryPolicy(mode="always").delay_ms(LlmFailure("x", "AUTH"), 1, random=lambda: 0.5) == 500
    )

"""Benchmark of the web capability: fetch overhead, HTML→Markdown time, abort→close latency.

Run: `python bench/web.py`. Everything talks to an HTTP/1.1 server this script starts on
127.0.0.1 (keep-alive, in the same event loop); nothing else is contacted.

1. Fetch overhead, per page size (10 KB and 200 KB of generated HTML), the four cases interleaved
   call by call, median µs per call over ROUNDS × CALLS:
   - bare: `await client.get(url)` + `response.text` on a reused `httpx2.AsyncClient`;
   - ctx.web.fetch: the `http` provider through the seam (URL checks, address policy with the
     server allowlisted, deadline, streamed read with caps, charset decoding);
   - web_fetch tool: `ctx.tools.execute` with the timeout policy loaded — the above plus the
     pipeline, argument validation, HTML→Markdown conversion and rendering.
   - conversion: `html_to_markdown` of the same page alone (what web_fetch adds by design).
   Ratios: `ctx.web.fetch / bare`, and `web_fetch / (bare + conversion)`.
2. HTML→Markdown for a 200 KB page: the depth pre-flight plus html-to-markdown, median of runs.
3. Abort → connection close: a `web_fetch` call streams a body that never ends; once the first
   chunk has arrived at the server side, the caller's signal is aborted, and the server records
   when it sees EOF on that connection. Median / p95 / max over ABORT_RUNS.

Targets: web_fetch ≤ 1.2× (bare GET + conversion); connection closed within 50 ms of abort.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import platform
import statistics
import time

import httpx2

from tether.core.signals import AbortController
from tether.kernel import Context
from tether.plugins import timeout_policy
from tether.plugins.web import fetch_http
from tether.plugins.web import tools as tool_web
from tether.plugins.web.markdown import html_to_markdown
from tether.plugins.web.service import WebService
from tether.plugins.web.vocabulary import WebFetchRequest
from tether.tools import ToolExecutionInput, ToolRuntime, ToolSuccess

ROUNDS = 7
CALLS = 30
CONVERSION_RUNS = 30
ABORT_RUNS = 40
TARGET_RATIO = 1.2
TARGET_CLOSE_MS = 50.0


def make_page(size: int) -> bytes:
    """A plausible article: headings, paragraphs with links and emphasis, lists, code, a table."""
    parts = [
        "<!doctype html><html><head><title>Bench</title><style>p{margin:0}</style>",
        "<script>var x = 1;</script></head><body><nav><a href='/'>home</a></nav><main>",
    ]
    i = 0
    while sum(map(len, parts)) < size - 600:
        parts.append(
            f"<h2>Section {i}</h2><p>Paragraph {i} with <a href='/doc/{i}'>a link</a>, "
            f"<strong>bold</strong> and <em>emphasis</em> text that goes on for a while to look "
            f"like prose.</p><ul><li>item one</li><li>item two</li></ul>"
            f"<pre><code class='language-py'>print({i})</code></pre>"
            f"<table><tr><th>k</th><th>v</th></tr><tr><td>{i}</td><td>x</td></tr></table>"
        )
        i += 1
    parts.append("</main></body></html>")
    return "".join(parts).encode()


class Server:
    """`/small`, `/large`: pages (keep-alive). `/stream`: headers + one chunk, then nothing,
    recording when the client closes."""

    def __init__(self, pages: dict[str, bytes]) -> None:
        self.pages = pages
        self.first_chunk = asyncio.Event()
        self.closed_at: float | None = None
        self.closed = asyncio.Event()
        self.port = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1].decode()
                if path == "/stream":
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n"
                        b"transfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n"
                    )
                    await writer.drain()
                    self.first_chunk.set()
                    while await reader.read(65536):
                        pass
                    self.closed_at = time.perf_counter()
                    self.closed.set()
                    return
                body = self.pages[path]
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\n"
                    b"content-length: %d\r\n\r\n%s" % (len(body), body)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def main() -> None:
    pages = {"/small": make_page(10_000), "/large": make_page(200_000)}
    server = Server(pages)
    listener = await asyncio.start_server(server.serve, "127.0.0.1", 0)
    server.port = port = listener.sockets[0].getsockname()[1]
    base = f"http://127.0.0.1:{port}"

    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(timeout_policy)
    await ctx.plugin(WebService)
    fetch_config = {"private_address_allowlist": [f"127.0.0.1:{port}"], "max_body_chars": 10**6}
    await ctx.plugin(fetch_http, fetch_config)
    await ctx.plugin(tool_web, {})
    bare_client = httpx2.AsyncClient(timeout=None, trust_env=False)

    async def bare(url: str) -> None:
        response = await bare_client.get(url)
        _ = response.text

    async def seam(url: str) -> None:
        await ctx.web.fetch(WebFetchRequest(url), signal=AbortController().signal)

    async def tool(url: str) -> None:
        result = await ctx.tools.execute(
            ToolExecutionInput(
                call_id="b",
                name="web_fetch",
                arguments={"url": url},
                signal=AbortController().signal,
            )
        )
        assert isinstance(result, ToolSuccess), result

    print(
        f"web bench — {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}; server on 127.0.0.1, same event loop\n"
    )

    # 1. overhead ---------------------------------------------------------------------------
    rows = []
    for path, page in pages.items():
        url = base + path
        for warm in (bare, seam, tool):
            await warm(url)
        html = page.decode()

        async def conversion(h: str = html, u: str = url) -> None:
            html_to_markdown(h, u)

        cases = {
            "bare": lambda u=url: bare(u),
            "seam": lambda u=url: seam(u),
            "tool": lambda u=url: tool(u),
            "convert": conversion,
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        order = list(cases)
        for _ in range(ROUNDS):
            gc.collect()
            gc.disable()  # a collection would land on whichever case happens to allocate last
            for i in range(CALLS):  # interleaved call by call, rotating who goes first
                for name in order[i % 4 :] + order[: i % 4]:
                    start = time.perf_counter()
                    await cases[name]()
                    samples[name].append(time.perf_counter() - start)
            gc.enable()
        b, s, t, convert_us = (
            statistics.median(samples[k]) * 1e6 for k in ("bare", "seam", "tool", "convert")
        )
        rows.append(
            (
                f"{path[1:]} ({len(page) // 1000} KB)",
                b,
                s,
                s / b,
                convert_us,
                t,
                t / (b + convert_us),
            )
        )

    print(
        "| page | bare GET µs | ctx.web.fetch µs | × bare | conversion µs | web_fetch µs "
        "| × (bare + conversion) | ≤ 1.2× |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|:---:|")
    for name, b, s, sr, c, t, tr in rows:
        ok = "yes" if tr <= TARGET_RATIO else "NO"
        print(
            f"| {name} | {b:,.0f} | {s:,.0f} | {sr:.2f}× | {c:,.0f} | {t:,.0f} | {tr:.2f}× | {ok} |"
        )

    # 2. conversion of a 200 KB page ---------------------------------------------------------
    large = pages["/large"].decode()
    samples = []
    for _ in range(CONVERSION_RUNS):
        start = time.perf_counter()
        markdown = html_to_markdown(large, base + "/large")
        samples.append(time.perf_counter() - start)
    print(
        f"\nHTML→Markdown, {len(large):,} chars of HTML → {len(markdown):,} chars of Markdown: "
        f"median {statistics.median(samples) * 1e3:.2f} ms, min {min(samples) * 1e3:.2f} ms "
        f"({CONVERSION_RUNS} runs)"
    )

    # 3. abort -> connection close -----------------------------------------------------------
    latencies = []
    for _ in range(ABORT_RUNS):
        server.first_chunk.clear()
        server.closed.clear()
        controller = AbortController()
        task = asyncio.create_task(
            ctx.tools.execute(
                ToolExecutionInput(
                    call_id="a",
                    name="web_fetch",
                    arguments={"url": base + "/stream"},
                    signal=controller.signal,
                )
            )
        )
        await server.first_chunk.wait()
        aborted_at = time.perf_counter()
        controller.abort()
        await server.closed.wait()
        assert server.closed_at is not None
        latencies.append((server.closed_at - aborted_at) * 1e3)
        result = await task
        assert result.is_error
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    ok = "yes" if latencies[-1] <= TARGET_CLOSE_MS else "NO"
    print(
        f"\nabort → connection closed (seen by the server), {ABORT_RUNS} runs: median "
        f"{statistics.median(latencies):.2f} ms, p95 {p95:.2f} ms, max {latencies[-1]:.2f} ms "
        f"— within {TARGET_CLOSE_MS:.0f} ms: {ok}"
    )

    await bare_client.aclose()
    await ctx.dispose()
    listener.close()
    with contextlib.suppress(Exception):
        await listener.wait_closed()


if __name__ == "__main__":
    asyncio.run(main())

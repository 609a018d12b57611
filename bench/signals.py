"""Micro-benchmark of the cancellation primitives against bare `asyncio.timeout`.

Run: `python bench/signals.py`. Prints µs per operation (median of ROUNDS rounds of ITERATIONS
iterations) and each primitive's ratio to the bare baseline measured in the same run, then the
listener count left on the shared upstream signal (must be 0: every cycle detaches).

Target: each primitive within 3× of bare `asyncio.timeout` create + enter/exit.
"""

from __future__ import annotations

import asyncio
import platform
import statistics
import time
from collections.abc import Awaitable, Callable

from tether.core.signals import AbortController, AbortSignal
from tether.core.timeout import deadline

ROUNDS = 5
ITERATIONS = 20_000
TARGET_RATIO = 3.0

Case = Callable[[int], Awaitable[None]]


def _noop(_reason: object) -> None:
    return None


async def bare_asyncio_timeout(n: int) -> None:
    for _ in range(n):
        async with asyncio.timeout(1):  # noqa: ASYNC100 -- measures bare create + enter/exit
            pass


def make_cases(upstream: AbortSignal) -> list[tuple[str, Case]]:
    other = AbortController().signal

    async def controller_listener(n: int) -> None:
        for _ in range(n):
            controller = AbortController()
            remove = controller.signal.add_listener(_noop)
            remove()

    async def fuse_any(n: int) -> None:
        for _ in range(n):
            AbortSignal.any(upstream, other).dispose()

    async def deadline_cycle(n: int) -> None:
        for _ in range(n):
            deadline(upstream, 1000, "X").dispose()

    async def cancels_scope(n: int) -> None:
        for _ in range(n):
            async with upstream.cancels():
                pass

    return [
        ("asyncio.timeout(1) create + async with (baseline)", bare_asyncio_timeout),
        ("AbortController() + add_listener + remove", controller_listener),
        ("AbortSignal.any(a, b) create + dispose", fuse_any),
        ('deadline(upstream, 1000, "X") create + dispose', deadline_cycle),
        ("async with signal.cancels(): pass", cancels_scope),
    ]


async def measure(case: Case) -> float:
    """Median µs per iteration over ROUNDS rounds."""
    await case(ITERATIONS // 10)  # warm-up
    samples: list[float] = []
    for _ in range(ROUNDS):
        # Let the loop drop the cancelled timer handles of the previous round.
        await asyncio.sleep(0)
        start = time.perf_counter_ns()
        await case(ITERATIONS)
        samples.append((time.perf_counter_ns() - start) / ITERATIONS / 1000)
    return statistics.median(samples)


async def main() -> None:
    upstream = AbortController().signal
    cases = make_cases(upstream)
    results = [(name, await measure(case)) for name, case in cases]
    baseline = results[0][1]

    print(
        f"python {platform.python_version()} · {ROUNDS} rounds × {ITERATIONS:,} iterations, "
        "median µs/op"
    )
    print()
    width = max(len(name) for name, _ in results)
    print(f"| {'operation':<{width}} | µs/op | × baseline | within {TARGET_RATIO:g}× |")
    print(f"|{'-' * (width + 2)}|------:|-----------:|:---------:|")
    for name, us in results:
        ratio = us / baseline
        ok = "yes" if ratio <= TARGET_RATIO else "NO"
        print(f"| {name:<{width}} | {us:5.2f} | {ratio:9.2f}× | {ok:^9} |")
    print()
    print(f"upstream.listener_count after all rounds: {upstream.listener_count}")
    if upstream.listener_count != 0:
        raise SystemExit("leak: listeners left on the upstream signal")


if __name__ == "__main__":
    asyncio.run(main())

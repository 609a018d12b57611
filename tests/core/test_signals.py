"""Contract of `tether.core.signals` (CONTRACT §1, spec §8 items 1–2).

- `AbortController.abort(reason)` is synchronous: `aborted` and `reason` are set before any listener
  runs; listeners then run once each, in registration order, and receive the reason. The default
  reason is an `AbortError`; a second abort is a no-op (the first reason wins).
- `add_listener` on an aborted signal runs the callback immediately. Every registration returns an
  idempotent remover; a listener removed before it runs (even by an earlier listener of the same
  abort) never runs. A raising listener is logged at WARNING on `tether.signals` with `exc_info`
  and never propagates into `abort()`; the other listeners still run.
- `throw_if_aborted()` raises the reason when it is an exception, else `AbortError(reason)`.
- `wait()` returns the reason; a cancelled waiter leaves no listener behind.
- `async with signal.cancels():` turns the signal's abort into a task cancellation and, on exit,
  into `AbortError(reason)` (or the reason itself when it is an exception). An outside
  cancellation stays `CancelledError`; an abort after the block's last await leaves the block's
  outcome and later awaits untouched.
- `AbortSignal.any(*inputs)` aborts with the first reason (argument order among pre-aborted
  inputs) and detaches from every input when it fires, on `dispose()` and on `with`-exit.
- `abort()` from another thread sets `aborted` at once; listeners run on the signal's loop thread.
- Create/dispose cycles of `deadline` and `AbortSignal.any` leave nothing behind on a long-lived
  upstream signal.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import threading
import tracemalloc
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.core.signals import AbortController, AbortError, AbortSignal, FusedSignal
from tether.core.timeout import TimeoutReason, deadline

# -- abort and listeners ------------------------------------------------------------------------


def test_abort_sets_aborted_and_reason_before_listeners_run_and_listeners_receive_the_reason() -> (
    None
):
    controller = AbortController()
    signal = controller.signal
    seen: list[tuple[bool, object, object]] = []
    signal.add_listener(lambda reason: seen.append((signal.aborted, signal.reason, reason)))

    controller.abort("stop")

    assert seen == [(True, "stop", "stop")]


def test_abort_runs_listeners_before_it_returns() -> None:
    controller = AbortController()
    calls: list[str] = []
    controller.signal.add_listener(lambda _: calls.append("ran"))

    controller.abort("stop")
    calls.append("returned")

    assert calls == ["ran", "returned"]


def test_a_fresh_signal_is_not_aborted_and_has_no_reason() -> None:
    signal = AbortController().signal

    assert signal.aborted is False
    assert signal.reason is None


def test_abort_without_a_reason_uses_an_abort_error() -> None:
    controller = AbortController()

    controller.abort()

    assert type(controller.signal.reason) is AbortError


def test_the_first_reason_wins_and_a_second_abort_is_a_no_op() -> None:
    controller = AbortController()
    calls: list[object] = []
    controller.signal.add_listener(calls.append)

    controller.abort("first")
    controller.abort("second")

    assert controller.signal.reason == "first"
    assert calls == ["first"]


def test_listeners_run_once_in_registration_order() -> None:
    controller = AbortController()
    calls: list[int] = []
    for index in range(5):
        controller.signal.add_listener(functools.partial(lambda i, _: calls.append(i), index))

    controller.abort("stop")
    controller.abort("again")

    assert calls == [0, 1, 2, 3, 4]
    assert controller.signal.listener_count == 0


def test_a_listener_added_to_an_aborted_signal_runs_immediately_with_the_reason() -> None:
    controller = AbortController()
    controller.abort("stop")
    calls: list[object] = []

    remove = controller.signal.add_listener(calls.append)

    assert calls == ["stop"]
    assert controller.signal.listener_count == 0
    remove()  # the remover of an immediate call is harmless
    assert calls == ["stop"]


def test_a_removed_listener_does_not_run() -> None:
    controller = AbortController()
    calls: list[str] = []
    remove = controller.signal.add_listener(lambda _: calls.append("removed"))
    controller.signal.add_listener(lambda _: calls.append("kept"))

    remove()
    controller.abort("stop")

    assert calls == ["kept"]


def test_the_remover_is_idempotent_and_removes_only_its_own_listener() -> None:
    controller = AbortController()
    calls: list[str] = []
    remove_a = controller.signal.add_listener(lambda _: calls.append("a"))
    controller.signal.add_listener(lambda _: calls.append("b"))

    remove_a()
    remove_a()
    remove_a()

    assert controller.signal.listener_count == 1
    controller.abort("stop")
    assert calls == ["b"]


def test_the_same_callback_registered_twice_runs_twice_and_each_remover_removes_one() -> None:
    controller = AbortController()
    calls: list[object] = []
    remove_first = controller.signal.add_listener(calls.append)
    controller.signal.add_listener(calls.append)

    remove_first()
    controller.abort("stop")

    assert calls == ["stop"]


def test_a_listener_removed_by_an_earlier_listener_of_the_same_abort_does_not_run() -> None:
    controller = AbortController()
    calls: list[str] = []
    removers: list[Callable[[], None]] = []
    controller.signal.add_listener(lambda _: removers[0]())
    removers.append(controller.signal.add_listener(lambda _: calls.append("second")))

    controller.abort("stop")

    assert calls == []
    assert controller.signal.listener_count == 0


def test_a_raising_listener_is_logged_with_exc_info_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    controller = AbortController()
    calls: list[str] = []
    boom = RuntimeError("listener failed")

    def raising(_: object) -> None:
        raise boom

    controller.signal.add_listener(lambda _: calls.append("before"))
    controller.signal.add_listener(raising)
    controller.signal.add_listener(lambda _: calls.append("after"))

    with caplog.at_level(logging.WARNING, logger="tether.signals"):
        controller.abort("stop")

    assert calls == ["before", "after"]
    [record] = caplog.records
    assert record.name == "tether.signals"
    assert record.levelno == logging.WARNING
    assert record.exc_info is not None
    assert record.exc_info[1] is boom


def test_a_listener_that_raises_on_an_already_aborted_signal_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    controller = AbortController()
    controller.abort("stop")

    def raising(_: object) -> None:
        raise ValueError("late listener failed")

    with caplog.at_level(logging.WARNING, logger="tether.signals"):
        controller.signal.add_listener(raising)

    [record] = caplog.records
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], ValueError)


# -- throw_if_aborted ---------------------------------------------------------------------------


def test_throw_if_aborted_does_nothing_while_the_signal_is_active() -> None:
    AbortController().signal.throw_if_aborted()


def test_throw_if_aborted_raises_the_reason_itself_when_it_is_an_exception() -> None:
    controller = AbortController()
    reason = TimeoutReason("BASH_TIMEOUT", 100)
    controller.abort(reason)

    with pytest.raises(TimeoutReason) as caught:
        controller.signal.throw_if_aborted()

    assert caught.value is reason


def test_throw_if_aborted_wraps_a_non_exception_reason_in_an_abort_error_carrying_it() -> None:
    controller = AbortController()
    reason = {"why": "user pressed ctrl-c"}
    controller.abort(reason)

    with pytest.raises(AbortError) as caught:
        controller.signal.throw_if_aborted()

    assert caught.value.reason is reason


def test_throw_if_aborted_raises_the_default_abort_error_itself() -> None:
    controller = AbortController()
    controller.abort()

    with pytest.raises(AbortError) as caught:
        controller.signal.throw_if_aborted()

    assert caught.value is controller.signal.reason


# -- wait ---------------------------------------------------------------------------------------


async def test_wait_returns_the_reason_once_the_signal_aborts() -> None:
    controller = AbortController()
    waiter = asyncio.create_task(controller.signal.wait())
    await asyncio.sleep(0)
    assert not waiter.done()

    controller.abort("stop")

    assert await waiter == "stop"
    assert controller.signal.listener_count == 0


async def test_wait_on_an_aborted_signal_returns_the_reason_at_once() -> None:
    controller = AbortController()
    controller.abort("stop")

    assert await controller.signal.wait() == "stop"


async def test_a_cancelled_waiter_leaves_no_listener_behind() -> None:
    signal = AbortController().signal
    waiter = asyncio.create_task(signal.wait())
    await asyncio.sleep(0)
    assert signal.listener_count == 1

    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter

    assert signal.listener_count == 0


# -- cancels() ----------------------------------------------------------------------------------


async def test_an_abort_during_an_await_in_cancels_raises_abort_error_with_the_reason() -> None:
    controller = AbortController()
    reached_end = False

    async def body() -> None:
        nonlocal reached_end
        async with controller.signal.cancels():
            await asyncio.Event().wait()
            reached_end = True

    task = asyncio.create_task(body())
    await asyncio.sleep(0)
    controller.abort("stop")

    with pytest.raises(AbortError) as caught:
        await task
    assert caught.value.reason == "stop"
    assert isinstance(caught.value.__cause__, asyncio.CancelledError)
    assert reached_end is False


async def test_an_exception_reason_is_raised_itself_by_cancels() -> None:
    controller = AbortController()
    reason = TimeoutReason("TOOL_TIMEOUT", 50)

    async def body() -> None:
        async with controller.signal.cancels():
            await asyncio.Event().wait()

    task = asyncio.create_task(body())
    await asyncio.sleep(0)
    controller.abort(reason)

    with pytest.raises(TimeoutReason) as caught:
        await task
    assert caught.value is reason


async def test_cancels_leaves_the_task_uncancelled_after_converting_the_abort() -> None:
    controller = AbortController()
    task = asyncio.current_task()
    assert task is not None

    async def block() -> None:
        async with controller.signal.cancels():
            controller.abort("stop")
            await asyncio.sleep(0)

    with pytest.raises(AbortError):
        await block()

    assert task.cancelling() == 0
    await asyncio.sleep(0)  # no stray cancellation is left pending


async def test_an_outside_task_cancel_inside_cancels_stays_a_cancelled_error() -> None:
    signal = AbortController().signal

    async def body() -> None:
        async with signal.cancels():
            await asyncio.Event().wait()

    task = asyncio.create_task(body())
    await asyncio.sleep(0)
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert signal.listener_count == 0


async def test_an_outside_cancel_and_an_abort_together_stay_a_cancelled_error() -> None:
    controller = AbortController()

    async def body() -> None:
        async with controller.signal.cancels():
            await asyncio.Event().wait()

    task = asyncio.create_task(body())
    await asyncio.sleep(0)
    task.cancel()
    controller.abort("stop")

    with pytest.raises(asyncio.CancelledError):
        await task


async def test_an_abort_after_the_last_await_keeps_the_block_result_and_leaks_no_cancel() -> None:
    controller = AbortController()
    task = asyncio.current_task()
    assert task is not None
    result = None

    async with controller.signal.cancels():
        await asyncio.sleep(0)
        controller.abort("late")
        result = "done"

    assert result == "done"
    assert task.cancelling() == 0
    await asyncio.sleep(0)  # would raise CancelledError if the request had leaked
    assert controller.signal.listener_count == 0


async def test_an_abort_after_the_last_await_lets_the_block_exception_propagate_unchanged() -> None:
    controller = AbortController()
    error = ValueError("the block's own failure")

    async def block() -> None:
        async with controller.signal.cancels():
            controller.abort("late")
            raise error

    with pytest.raises(ValueError, match="the block's own failure") as caught:
        await block()

    assert caught.value is error
    await asyncio.sleep(0)


async def test_cancels_on_an_already_aborted_signal_raises_at_the_first_await() -> None:
    controller = AbortController()
    controller.abort("early")
    steps: list[str] = []

    async def block() -> None:
        async with controller.signal.cancels():
            steps.append("entered")
            await asyncio.sleep(0)
            steps.append("after await")

    with pytest.raises(AbortError) as caught:
        await block()

    assert caught.value.reason == "early"
    assert steps == ["entered"]


async def test_a_block_without_awaits_on_an_already_aborted_signal_completes() -> None:
    controller = AbortController()
    controller.abort("early")
    result = None

    async with controller.signal.cancels():
        result = "done"

    assert result == "done"
    await asyncio.sleep(0)


async def test_a_cancels_block_that_completes_leaves_no_listener_behind() -> None:
    signal = AbortController().signal

    async with signal.cancels():
        await asyncio.sleep(0)

    assert signal.listener_count == 0


async def test_an_inner_scope_abort_raises_out_of_the_outer_scope_unchanged() -> None:
    outer = AbortController()
    inner = AbortController()

    async def block() -> None:
        async with outer.signal.cancels(), inner.signal.cancels():
            inner.abort("inner")
            await asyncio.sleep(0)

    with pytest.raises(AbortError) as caught:
        await block()

    assert caught.value.reason == "inner"


async def test_an_outer_scope_abort_passes_through_the_inner_scope_as_the_outer_reason() -> None:
    outer = AbortController()
    inner = AbortController()
    inner_exit: list[type[BaseException]] = []

    async def block() -> None:
        async with outer.signal.cancels():
            try:
                async with inner.signal.cancels():
                    outer.abort("outer")
                    await asyncio.sleep(0)
            except BaseException as exc:
                inner_exit.append(type(exc))
                raise

    with pytest.raises(AbortError) as caught:
        await block()

    assert inner_exit == [asyncio.CancelledError]
    assert caught.value.reason == "outer"


async def test_cancels_outside_a_task_raises_runtime_error() -> None:
    signal = AbortController().signal
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[BaseException] = loop.create_future()

    async def enter() -> None:
        async with signal.cancels():
            pass

    def drive_outside_any_task() -> None:
        coro = enter()
        try:
            coro.send(None)
        except BaseException as exc:
            outcome.set_result(exc)

    loop.call_soon(drive_outside_any_task)
    error = await outcome

    assert type(error) is RuntimeError
    assert str(error) == "signal.cancels() must be used inside an asyncio task"
    assert signal.listener_count == 0


# -- AbortSignal.any ----------------------------------------------------------------------------


def test_any_aborts_with_the_reason_of_the_first_input_to_abort() -> None:
    a, b = AbortController(), AbortController()
    fused = AbortSignal.any(a.signal, b.signal)
    assert not fused.aborted

    b.abort("b")
    a.abort("a")

    assert fused.aborted
    assert fused.reason == "b"


def test_any_with_several_pre_aborted_inputs_takes_the_first_in_argument_order() -> None:
    a, b, c = AbortController(), AbortController(), AbortController()
    c.abort("c")  # aborted earlier in time, but later in argument order
    b.abort("b")

    fused = AbortSignal.any(a.signal, b.signal, c.signal)

    assert fused.reason == "b"


def test_any_with_a_pre_aborted_input_attaches_no_listener_to_any_input() -> None:
    a, b = AbortController(), AbortController()
    b.abort("b")

    AbortSignal.any(a.signal, b.signal)

    assert a.signal.listener_count == 0
    assert b.signal.listener_count == 0


def test_any_detaches_from_every_input_when_it_fires() -> None:
    a, b, c = AbortController(), AbortController(), AbortController()
    AbortSignal.any(a.signal, b.signal, c.signal)
    assert [s.signal.listener_count for s in (a, b, c)] == [1, 1, 1]

    b.abort("b")

    assert [s.signal.listener_count for s in (a, b, c)] == [0, 0, 0]


def test_any_detaches_from_every_input_on_dispose_and_stops_following_them() -> None:
    a, b = AbortController(), AbortController()
    fused = AbortSignal.any(a.signal, b.signal)

    fused.dispose()
    fused.dispose()
    a.abort("a")

    assert a.signal.listener_count == 0
    assert b.signal.listener_count == 0
    assert fused.aborted is False


def test_any_detaches_from_every_input_on_with_exit() -> None:
    a, b = AbortController(), AbortController()

    with AbortSignal.any(a.signal, b.signal) as fused:
        assert isinstance(fused, FusedSignal)
        assert a.signal.listener_count == 1

    assert a.signal.listener_count == 0
    assert b.signal.listener_count == 0


def test_any_runs_its_own_listeners_with_the_winning_reason() -> None:
    a = AbortController()
    fused = AbortSignal.any(a.signal)
    calls: list[object] = []
    fused.add_listener(calls.append)

    a.abort("a")

    assert calls == ["a"]


def test_any_of_no_inputs_never_aborts() -> None:
    assert AbortSignal.any().aborted is False


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_always_takes_the_first_reason_by_argument_order_then_abort_order(
    data: st.DataObject,
) -> None:
    kinds = data.draw(
        st.lists(st.sampled_from(["pre", "later", "never"]), min_size=1, max_size=6), label="kinds"
    )
    controllers = [AbortController() for _ in kinds]
    reasons = [f"reason-{index}" for index in range(len(kinds))]
    pre = [index for index, kind in enumerate(kinds) if kind == "pre"]
    later = [index for index, kind in enumerate(kinds) if kind == "later"]
    pre_order = data.draw(st.permutations(pre), label="pre-abort order (time)")
    later_order = data.draw(st.permutations(later), label="later abort order (time)")

    for index in pre_order:
        controllers[index].abort(reasons[index])
    fused = AbortSignal.any(*(c.signal for c in controllers))
    for index in later_order:
        controllers[index].abort(reasons[index])

    if pre:
        expected: object = reasons[pre[0]]  # argument order, not abort time
    elif later_order:
        expected = reasons[later_order[0]]  # abort time
    else:
        expected = None
    assert fused.reason == expected
    assert fused.aborted is (expected is not None)
    fused.dispose()
    assert all(c.signal.listener_count == 0 for c in controllers)


# -- threads ------------------------------------------------------------------------------------


async def test_abort_from_another_thread_sets_aborted_at_once_and_runs_listeners_on_the_loop() -> (
    None
):
    controller = AbortController()
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    listener_thread: asyncio.Future[int] = loop.create_future()
    controller.signal.add_listener(lambda _: listener_thread.set_result(threading.get_ident()))
    abort_thread: list[int] = []

    def abort_elsewhere() -> None:
        abort_thread.append(threading.get_ident())
        controller.abort("from a thread")

    worker = threading.Thread(target=abort_elsewhere)
    worker.start()
    worker.join()

    assert controller.signal.aborted is True
    assert controller.signal.reason == "from a thread"
    assert not listener_thread.done()  # the loop has not had a turn yet

    assert await listener_thread == loop_thread
    assert abort_thread[0] != loop_thread


# -- leaks --------------------------------------------------------------------------------------

CYCLES = 100_000
WARM_UP = 5_000
YIELD_EVERY = 1_000
# A leaked listener costs at least a dict slot plus a closure (> 100 bytes), so a per-cycle leak
# over 100,000 cycles is > 10 MB; even one leaked byte per cycle would be ~98 KiB. 64 KiB sits
# far above allocator noise (a few KiB of free lists and tracemalloc's own bookkeeping) and below
# any per-cycle leak.
GROWTH_BOUND = 64 * 1024


async def _traced_growth(cycle: object, cycles: int) -> int:
    """Bytes still allocated after `cycles` calls of `cycle()` (after a warm-up)."""
    assert callable(cycle)

    async def run(n: int) -> None:
        for index in range(n):
            cycle()
            if index % YIELD_EVERY == 0:
                await asyncio.sleep(0)  # let the loop drop cancelled timer handles
        await asyncio.sleep(0)
        gc.collect()

    tracemalloc.start()
    try:
        await run(WARM_UP)
        before = tracemalloc.get_traced_memory()[0]
        await run(cycles)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before


async def test_deadline_create_and_dispose_cycles_leave_nothing_on_the_upstream() -> None:
    upstream = AbortController().signal

    def cycle() -> None:
        deadline(upstream, 1000, "X").dispose()

    growth = await _traced_growth(cycle, CYCLES)

    assert upstream.listener_count == 0
    assert growth < GROWTH_BOUND


async def test_any_create_and_dispose_cycles_leave_nothing_on_the_inputs() -> None:
    upstream = AbortController().signal
    other = AbortController().signal

    def cycle() -> None:
        AbortSignal.any(upstream, other).dispose()

    growth = await _traced_growth(cycle, CYCLES)

    assert upstream.listener_count == 0
    assert other.listener_count == 0
    assert growth < GROWTH_BOUND


def test_a_chain_of_five_thousand_derived_signals_aborts_to_its_end() -> None:
    root = AbortController()
    chain = [root.signal]
    for _ in range(5000):
        chain.append(AbortSignal.any(chain[-1]))
    seen: list[object] = []
    chain[-1].add_listener(seen.append)

    root.abort("stop")

    assert all(signal.aborted for signal in chain)
    assert seen == ["stop"]
    assert all(signal.listener_count == 0 for signal in chain)

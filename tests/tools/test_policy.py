"""Policy before dispatch: `tools/pre-execute`, `Ask` and the approval service, and guards
(spec §1.3–§1.7; CONTRACT §4.2, §4.4).

Contract:
- `tools/pre-execute` is a waterfall whose base allows. `Deny(reason)` ends the call with
  `Error: <reason>` (no info) and still runs `tools/post-execute`; guards are not consulted.
  A malformed decision fails closed: an error result, never a dispatch, no post-execute. A raising
  listener is an error result without post-execute.
- `Ask` goes to the `approval` service looked up on every ask; without one it is a denial with the
  ask's reason or `tool "<name>" requires approval (not yet supported)`; with one but no agent,
  `tool "<name>" requires approval, but the call has no agent to route it through`. Answers:
  `allowed-once` continues to the guards; `rejected`, `cancelled`, `unavailable` deny with their
  texts; anything else is `unreachable variant in ApprovalOutcome: "<json>"` without post-execute.
- `Allow(arguments=...)` (an approver's changed input) replaces the call's arguments before the
  guards: the guards and the body see them, and the tool's validation checks them (`INVALID_ARGS`,
  the body never runs). A listener's `next(arguments=...)` replaces them for the rest of the
  chain (later listeners see them); arguments that are not JSON are a failure.
- Guards run only for allowed calls, in registration order; the first string denies (monotonic:
  no listener can undo it). Iteration is live within a generation: a guard registered by an
  earlier guard runs in the same evaluation, unless the table drained to empty first.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from tether import (
    AbortSignal,
    Allow,
    ApprovalRequest,
    Ask,
    Deny,
    ToolExecution,
    ToolExecutionResult,
    ToolFailure,
    ToolOutput,
    ToolRunContext,
    define_tool,
)
from tether.kernel import Context

from .conftest import Recorder, call, denied_json, error_json, raw_tool, success_json

AGENT = object()


def _deciding(decision: object) -> Any:
    async def pre(exec: ToolExecution, next: Any) -> object:
        return decision

    return pre


def _counting_tool(recorder: Recorder, name: str = "echo") -> Any:
    async def body(args: Any, exec: ToolRunContext) -> str:
        recorder.hit("body")
        return "ran"

    return raw_tool(name, body)


class Approval:
    """An approval service that answers with `outcome` and keeps the requests it got."""

    def __init__(self, outcome: object) -> None:
        self.outcome = outcome
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> object:
        self.requests.append(request)
        return self.outcome


# -- pre-execute ---------------------------------------------------------------------------------


async def test_without_listeners_a_call_is_allowed(ctx: Context) -> None:
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("ok")


async def test_a_pre_execute_denial_ends_the_call_with_its_reason_and_runs_post_execute(
    ctx: Context, recorder: Recorder
) -> None:
    ctx.on("tools/pre-execute", _deciding(Deny("policy says no")), prepend=True)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call())

    assert result.to_json() == denied_json("policy says no")
    assert isinstance(result, ToolFailure)
    assert result.code == "DENIED"
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 1, "result": 1}


async def test_post_execute_sees_a_frozen_denial(ctx: Context) -> None:
    seen: list[ToolExecutionResult] = []

    async def post(exec: ToolExecution, result: ToolExecutionResult, next: Any) -> Any:
        seen.append(result)
        return await next()

    ctx.on("tools/pre-execute", _deciding(Deny("no")))
    ctx.on("tools/post-execute", post)
    ctx.tools.register(raw_tool())

    await ctx.tools.execute(call())

    (denial,) = seen
    with pytest.raises(AttributeError):
        denial.content = []  # type: ignore[misc]
    with pytest.raises(TypeError):
        denial.content[0]["text"] = "changed"  # type: ignore[index]


async def test_a_denial_skips_the_guards(ctx: Context) -> None:
    guarded: list[str] = []
    ctx.tools.guard(lambda exec: guarded.append(exec.name))
    ctx.on("tools/pre-execute", _deciding(Deny("no")))
    ctx.tools.register(raw_tool())

    await ctx.tools.execute(call())

    assert guarded == []


async def test_a_listener_that_decides_alone_skips_later_listeners(ctx: Context) -> None:
    later: list[str] = []

    async def later_listener(exec: ToolExecution, next: Any) -> Any:
        later.append("ran")
        return await next()

    ctx.on("tools/pre-execute", _deciding(Allow()))
    ctx.on("tools/pre-execute", later_listener)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("ok")
    assert later == []


async def test_a_listener_can_transform_the_downstream_decision(ctx: Context) -> None:
    async def overrule(exec: ToolExecution, next: Any) -> object:
        decided = await next()
        return Deny(f"overruled {type(decided).__name__}")

    ctx.on("tools/pre-execute", overrule)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == denied_json("overruled Allow")


async def test_pre_execute_sees_frozen_arguments_and_the_callers_signal(ctx: Context) -> None:
    seen: list[tuple[object, AbortSignal]] = []

    async def pre(exec: ToolExecution, next: Any) -> Any:
        seen.append((exec.arguments, exec.signal))
        return await next()

    ctx.on("tools/pre-execute", pre)
    ctx.tools.register(raw_tool())
    request = call(arguments={"path": ["a"]})

    await ctx.tools.execute(request)

    ((arguments, signal),) = seen
    assert arguments == {"path": ["a"]}
    assert signal is request.signal
    with pytest.raises(TypeError):
        arguments["path"] = []  # type: ignore[index]


async def test_a_raising_pre_execute_listener_ends_the_call_without_post_execute(
    ctx: Context, recorder: Recorder
) -> None:
    async def broken(exec: ToolExecution, next: Any) -> Any:
        raise RuntimeError("gate broke")

    ctx.on("tools/pre-execute", broken, prepend=True)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("gate broke")
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 0, "result": 1}


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        pytest.param(
            None,
            "tools/pre-execute must decide Allow(), Deny(reason) or Ask(reason); got NoneType",
            id="none",
        ),
        pytest.param(
            "allow",
            "tools/pre-execute must decide Allow(), Deny(reason) or Ask(reason); got str",
            id="string",
        ),
        pytest.param(
            Deny(reason=None), "Deny(reason) needs a str reason", id="deny-without-reason"
        ),  # type: ignore[arg-type]
    ],
)
async def test_a_malformed_pre_decision_fails_closed_without_dispatch_or_post_execute(
    ctx: Context, recorder: Recorder, decision: object, message: str
) -> None:
    ctx.on("tools/pre-execute", _deciding(decision), prepend=True)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json(message)
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 0, "result": 1}


# -- ask and approval ----------------------------------------------------------------------------


async def test_ask_without_an_approval_service_is_denied_with_the_default_text(
    ctx: Context,
) -> None:
    ctx.on("tools/pre-execute", _deciding(Ask()))
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call(agent=AGENT))

    assert result.to_json() == denied_json('tool "echo" requires approval (not yet supported)')


async def test_ask_without_an_approval_service_is_denied_with_the_asks_reason(
    ctx: Context,
) -> None:
    ctx.on("tools/pre-execute", _deciding(Ask("writes outside the project")))
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call(agent=AGENT))

    assert result.to_json() == denied_json("writes outside the project")


async def test_ask_without_an_agent_is_denied_without_asking_the_service(ctx: Context) -> None:
    approval = Approval("allowed-once")
    ctx.provide("approval", approval)
    ctx.on("tools/pre-execute", _deciding(Ask("ignored reason")))
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == denied_json(
        'tool "echo" requires approval, but the call has no agent to route it through'
    )
    assert approval.requests == []


async def test_an_approval_allowed_once_runs_the_tool(ctx: Context, recorder: Recorder) -> None:
    ctx.provide("approval", Approval("allowed-once"))
    ctx.on("tools/pre-execute", _deciding(Ask()), prepend=True)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call(agent=AGENT))

    assert result.to_json() == success_json("ran")
    assert recorder.counts["body"] == 1


async def test_the_approval_request_names_the_call_and_carries_the_callers_signal(
    ctx: Context,
) -> None:
    approval = Approval("allowed-once")
    ctx.provide("approval", approval)
    ctx.on("tools/pre-execute", _deciding(Ask("why not")))
    ctx.tools.register(raw_tool())
    request = call(agent=AGENT, call_id="c9")

    await ctx.tools.execute(request)

    assert approval.requests == [
        ApprovalRequest(
            agent=AGENT, tool_name="echo", call_id="c9", reason="why not", signal=request.signal
        )
    ]
    assert approval.requests[0].signal is request.signal


async def test_an_ask_without_a_reason_asks_with_none(ctx: Context) -> None:
    approval = Approval("allowed-once")
    ctx.provide("approval", approval)
    ctx.on("tools/pre-execute", _deciding(Ask()))
    ctx.tools.register(raw_tool())

    await ctx.tools.execute(call(agent=AGENT))

    assert approval.requests[0].reason is None


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        ("rejected", 'the user rejected tool "echo"'),
        ("cancelled", 'approval for tool "echo" was cancelled'),
        ("unavailable", 'tool "echo" requires approval, but no approval channel is available'),
    ],
)
async def test_an_approval_answer_other_than_allowed_once_denies_with_its_text(
    ctx: Context, recorder: Recorder, outcome: str, message: str
) -> None:
    ctx.provide("approval", Approval(outcome))
    ctx.on("tools/pre-execute", _deciding(Ask("reason")), prepend=True)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call(agent=AGENT))

    assert result.to_json() == denied_json(message)
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 1, "result": 1}


async def test_a_rogue_approval_answer_is_an_error_without_post_execute(
    ctx: Context, recorder: Recorder
) -> None:
    ctx.provide("approval", Approval("maybe"))
    ctx.on("tools/pre-execute", _deciding(Ask()), prepend=True)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call(agent=AGENT))

    assert result.to_json() == error_json('unreachable variant in ApprovalOutcome: "maybe"')
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 0, "result": 1}


async def test_a_raising_approval_service_is_an_error_without_post_execute(
    ctx: Context, recorder: Recorder
) -> None:
    class Broken:
        async def request(self, request: ApprovalRequest) -> str:
            raise RuntimeError("prompt crashed")

    ctx.provide("approval", Broken())
    ctx.on("tools/pre-execute", _deciding(Ask()), prepend=True)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call(agent=AGENT))

    assert result.to_json() == error_json("prompt crashed")
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 0, "result": 1}


async def test_the_approval_service_is_looked_up_on_every_ask(ctx: Context) -> None:
    ctx.on("tools/pre-execute", _deciding(Ask()))
    ctx.tools.register(raw_tool())
    before = await ctx.tools.execute(call(agent=AGENT))
    ctx.provide("approval", Approval("allowed-once"))

    after = await ctx.tools.execute(call(agent=AGENT))

    assert before.to_json() == denied_json('tool "echo" requires approval (not yet supported)')
    assert after.to_json() == success_json("ok")


async def test_an_approved_call_still_meets_the_guards(ctx: Context) -> None:
    ctx.provide("approval", Approval("allowed-once"))
    ctx.on("tools/pre-execute", _deciding(Ask()))
    ctx.tools.guard(lambda exec: "guard says no")
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call(agent=AGENT))

    assert result.to_json() == denied_json("guard says no")


# -- guards --------------------------------------------------------------------------------------


async def test_a_guard_string_denies_and_post_execute_still_runs(
    ctx: Context, recorder: Recorder
) -> None:
    ctx.tools.guard(lambda exec: f"no {exec.name} today")
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call())

    assert result.to_json() == denied_json("no echo today")
    assert recorder.counts == {"pre": 1, "around": 0, "body": 0, "post": 1, "result": 1}


async def test_an_empty_string_from_a_guard_still_denies(ctx: Context) -> None:
    ctx.tools.guard(lambda exec: "")
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == denied_json("")


async def test_guards_run_in_registration_order_and_the_first_denial_wins(ctx: Context) -> None:
    calls: list[str] = []

    def guard(label: str, verdict: str | None) -> Any:
        def check(exec: ToolExecution) -> str | None:
            calls.append(label)
            return verdict

        return check

    ctx.tools.guard(guard("abstains", None))
    ctx.tools.guard(guard("denies", "first denial"))
    ctx.tools.guard(guard("never asked", "second denial"))
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == denied_json("first denial")
    assert calls == ["abstains", "denies"]


async def test_a_prepended_allow_cannot_bypass_a_guard(ctx: Context) -> None:
    ctx.tools.guard(lambda exec: "guarded")
    ctx.on("tools/pre-execute", _deciding(Allow()), prepend=True)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == denied_json("guarded")


async def test_a_guard_sees_the_execution(ctx: Context) -> None:
    seen: list[tuple[str, object]] = []

    def guard(exec: ToolExecution) -> None:
        seen.append((exec.name, exec.arguments))

    ctx.tools.guard(guard)
    ctx.tools.register(raw_tool())

    await ctx.tools.execute(call(arguments={"q": 1}))

    assert seen == [("echo", {"q": 1})]


async def test_a_raising_guard_is_an_error_without_post_execute(
    ctx: Context, recorder: Recorder
) -> None:
    def guard(exec: ToolExecution) -> str | None:
        raise RuntimeError("guard crashed")

    ctx.tools.guard(guard)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("guard crashed")
    assert recorder.counts == {"pre": 1, "around": 0, "body": 0, "post": 0, "result": 1}


async def test_a_guard_returning_a_non_string_fails_closed(ctx: Context) -> None:
    ctx.tools.guard(lambda exec: True)  # type: ignore[arg-type,return-value]
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("a guard returns a denial reason (str) or None; got True")


async def test_a_disposed_guard_no_longer_runs(ctx: Context) -> None:
    remove = ctx.tools.guard(lambda exec: "denied")
    ctx.tools.register(raw_tool())
    remove()

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("ok")


async def test_registering_a_guard_does_not_emit_tools_change(ctx: Context) -> None:
    changes: list[str] = []
    ctx.on("tools/change", lambda: changes.append("change"))

    ctx.tools.guard(lambda exec: None)

    assert changes == []


async def test_a_guard_registered_by_an_earlier_guard_runs_in_the_same_evaluation(
    ctx: Context,
) -> None:
    calls: list[str] = []

    def late(exec: ToolExecution) -> str:
        calls.append("late")
        return "late denial"

    def first(exec: ToolExecution) -> None:
        calls.append("first")
        if "late" not in calls:
            ctx.tools.guard(late)

    ctx.tools.guard(first)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == denied_json("late denial")
    assert calls == ["first", "late"]


async def test_a_guard_replacing_the_last_guard_of_its_generation_waits_for_the_next_call(
    ctx: Context,
) -> None:
    calls: list[str] = []

    def replacement(exec: ToolExecution) -> str:
        calls.append("replacement")
        return "replacement denial"

    def first(exec: ToolExecution) -> None:
        calls.append("first")
        remove_first()
        ctx.tools.guard(replacement)

    remove_first = ctx.tools.guard(first)

    async def body(args: Any, exec: ToolRunContext) -> str:
        return f"ran:{exec.name}"

    ctx.tools.register(raw_tool("t", body))

    first_result = await ctx.tools.execute(call("t"))
    assert first_result.to_json() == success_json("ran:t")
    assert calls == ["first"]

    second_result = await ctx.tools.execute(call("t"))
    assert second_result.to_json() == denied_json("replacement denial")
    assert calls == ["first", "replacement"]


# -- Allow with arguments ------------------------------------------------------------------------


def _configure_tool(recorder: Recorder) -> Any:
    class Config(BaseModel):
        host: str

    async def body(args: Any, exec: ToolRunContext) -> str:
        recorder.hit("body")
        return f"{args.host} {dict(exec.arguments)}"

    return define_tool(
        name="configure",
        description="configure a host",
        parameters=Config,
        output=ToolOutput(schema=str),
        execute=body,
    )


async def test_an_allow_with_arguments_runs_the_call_with_them_and_guards_see_them(
    ctx: Context,
) -> None:
    recorder = Recorder()
    ctx.tools.register(_configure_tool(recorder))
    ctx.on("tools/pre-execute", _deciding(Allow(arguments={"host": "changed"})))
    guarded: list[object] = []

    def guard(exec: ToolExecution) -> None:
        guarded.append(exec.arguments)

    ctx.tools.guard(guard)

    result = await ctx.tools.execute(call("configure", {"host": "asked"}))

    assert result.to_json() == success_json("changed {'host': 'changed'}")
    assert guarded == [{"host": "changed"}]


async def test_an_allow_with_invalid_arguments_is_invalid_args_and_the_body_never_runs(
    ctx: Context,
) -> None:
    recorder = Recorder()
    ctx.tools.register(_configure_tool(recorder))
    ctx.on("tools/pre-execute", _deciding(Allow(arguments={"port": 1})))

    result = await ctx.tools.execute(call("configure", {"host": "asked"}))

    assert result.to_json() == error_json(
        "invalid arguments: host: Field required", "ToolArgsError", "INVALID_ARGS"
    )
    assert recorder.counts["body"] == 0


async def test_next_with_arguments_gives_the_rest_of_the_chain_and_the_body_the_changed_input(
    ctx: Context,
) -> None:
    recorder = Recorder()
    ctx.tools.register(_configure_tool(recorder))
    seen: list[object] = []

    async def change(exec: ToolExecution, next: Any) -> object:
        return await next(arguments={"host": "changed"})

    async def look(exec: ToolExecution, next: Any) -> object:
        seen.append(exec.arguments)
        return await next()

    ctx.on("tools/pre-execute", change)
    ctx.on("tools/pre-execute", look)

    result = await ctx.tools.execute(call("configure", {"host": "asked"}))

    assert result.to_json() == success_json("changed {'host': 'changed'}")
    assert seen == [{"host": "changed"}]


async def test_next_with_arguments_that_are_not_json_is_a_failure_and_the_body_never_runs(
    ctx: Context,
) -> None:
    recorder = Recorder()
    ctx.tools.register(_configure_tool(recorder))

    async def change(exec: ToolExecution, next: Any) -> object:
        return await next(arguments={"host": object()})

    ctx.on("tools/pre-execute", change)

    result = await ctx.tools.execute(call("configure", {"host": "asked"}))

    assert result.to_json() == error_json(
        "changed tool execution arguments must be losslessly JSON-serializable"
    )
    assert recorder.counts["body"] == 0

"""The session workflow's activities, run on a worker that mounts a full tether `Context` from
its `tether.yml`: `llm_step` (one model call), `tool_call` (one call through the tool pipeline;
it prepares the call and, unless a human must be asked, dispatches it) and `tool_dispatch` (a
call a human answered; see `tether.temporal.approvals`).

Owns: how an activity keeps tether's cancellation contract under Temporal. Every activity
heartbeats from a task beside its body (so a long, silent tool is still cancellable and a dead
worker is noticed within `heartbeat_timeout`). A Temporal cancel arrives as a cancellation of
the activity's task: the activity aborts the call's caller-owned `AbortSignal`, keeps awaiting
the body to quiescence (the capability stops its process group or HTTP stream), and **returns**
the published result — `ABORTED` after dispatch — so a started call never surfaces as an
exception.

Sizes: a `tool/result` record bigger than `inline_bytes` comes back with its big fields in the
payload store (`ToolCallOutput.refs`; only to a workflow that asked for references), and so does
a big request header. A model step reads the conversation by reference (`conversation.load`,
each segment fetched once while the worker's blob cache keeps it), seals a tail that grew
(`conversation.seal`), and sends the header back only when its digest differs from the one the
workflow holds. Separately, a result whose JSON exceeds the spill threshold is kept whole on the
worker and the model gets a preview and the file's locator (a bound on the model's context).

`TOOL_TIMEOUT` stays the timeout policy's, inside `ctx.tools.execute`; the activity's
`start_to_close` is only a backstop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
from collections.abc import Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, TypeVar, cast

from temporalio import activity

from ..agent.llm import LlmError, LlmRequest
from ..agent.llm.service import Llm, RetryNotice
from ..agent.loop import default_system_prompt
from ..agent.messages import (
    StreamChunk,
    failure_to_json,
    message_to_json,
    tool_result_message,
    usage_to_json,
)
from ..agent.offered import offered
from ..agent.scheduler import parse_arguments
from ..agent.session import SessionEvent, derive_messages
from ..core.errors import error_message
from ..core.json import FrozenDict, JsonValue, snapshot
from ..core.signals import AbortController, AbortError, AbortSignal
from ..kernel import Context
from ..plugins.approval import ApprovalQuestion
from ..tools.execution import ToolExecutionInput
from ..tools.registry import ToolRuntime, ToolsView
from ..tools.results import ToolExecutionResult, ToolFailure, aborted_before_dispatch_result
from . import conversation
from .approvals import DeferredApprovals, PolicyScope
from .blobs import DEFAULT_INLINE_BYTES, BlobStore, encoded_size
from .payloads import (
    LLM_STEP,
    TOOL_CALL,
    TOOL_DISPATCH,
    ApprovalAsk,
    BlobRef,
    Conversation,
    LlmStepInput,
    LlmStepOutput,
    LogEntry,
    PlannedCall,
    ToolCallInput,
    ToolCallOutput,
    ToolDispatchInput,
    header_digest,
)

__all__ = ["DEFAULT_SPILL_BYTES", "TetherActivities", "WorkerAgent", "plain"]

DEFAULT_SPILL_BYTES: Final = 512 * 1024
"""Results whose JSON is larger are spilled: the model gets a preview, the worker keeps the
whole (what the spill policy does for plain text, for any result)."""

_PREVIEW_CHARS: Final = 4000
_T = TypeVar("_T")


def plain(value: object) -> Any:
    """A JSON value as plain dicts and lists (tether's frozen containers become ordinary ones)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class WorkerAgent:
    """What a tool sees as `exec.agent` on a worker: the workspace (`cwd`, against which `bash`
    resolves its workdir) and the session the call belongs to."""

    cwd: Path
    session_id: str


class TetherActivities:
    """The activities over one booted `Context` (`ctx.tools`, and `llm` for model steps)."""

    def __init__(
        self,
        ctx: Context,
        *,
        cwd: Path,
        blobs: BlobStore,
        worker_name: str | None = None,
        spill_dir: Path | None = None,
        spill_bytes: int = DEFAULT_SPILL_BYTES,
        inline_bytes: int = DEFAULT_INLINE_BYTES,
        heartbeat_every_s: float = 0.25,
    ) -> None:
        view = ctx.get("tools")
        tools = view.runtime if isinstance(view, ToolsView) else view
        if not isinstance(tools, ToolRuntime):
            raise RuntimeError("the worker's context has no tool runtime (`tools`) mounted")
        self.ctx = ctx
        self.tools = tools
        llm = ctx.get("llm")
        self.llm = llm if isinstance(llm, Llm) else None
        self.cwd = cwd
        self.worker_name = worker_name or f"{socket.gethostname()}:{os.getpid()}"
        self.blobs = blobs
        self.spill_dir = spill_dir
        self.spill_bytes = spill_bytes
        self.inline_bytes = inline_bytes
        self.heartbeat_every_s = heartbeat_every_s
        self.approvals = DeferredApprovals()

    # -- tool calls ---------------------------------------------------------------------------

    @activity.defn(name=TOOL_CALL)
    async def tool_call(self, input: ToolCallInput) -> ToolCallOutput:
        """Prepare one call (pre-execute, approval, guards) and, when nobody has to be asked,
        dispatch it in the same activity; returns its published result, also after a Temporal
        cancel. An `Ask` on a `--approvals` worker ends it before dispatch instead: the output
        carries the question (`ask`) and the workflow waits for a human's answer."""
        return await self._run(input, self.approvals.deferring(input.call_id))

    @activity.defn(name=TOOL_DISPATCH)
    async def tool_dispatch(self, input: ToolDispatchInput) -> ToolCallOutput:
        """Run a call a human answered (the workflow's `approve` Update) through the whole
        pipeline again: the policy stage runs afresh, and if it still asks, the answer is the
        human's — allowed, the body runs; rejected, the result is the pipeline's denial."""
        scope = self.approvals.answering(input.call.call_id, input.decision, input.fingerprint)
        return await self._run(input.call, scope)

    async def _run(
        self, input: ToolCallInput, scope: AbstractAsyncContextManager[PolicyScope]
    ) -> ToolCallOutput:
        controller = AbortController()
        call = ToolExecutionInput(
            call_id=input.call_id,
            name=input.name,
            arguments=parse_arguments(input.arguments),
            signal=controller.signal,
            agent=WorkerAgent(self.cwd, input.session_id),
        )
        outcome, cancelled = await _to_quiescence(
            self._staged(call, scope), controller, self.heartbeat_every_s
        )
        if isinstance(outcome, ApprovalQuestion):
            arguments = json.dumps(plain(outcome.arguments), ensure_ascii=False)
            ask = ApprovalAsk(
                outcome.call_id, outcome.tool_name, arguments, outcome.reason, outcome.fingerprint
            )
            return ToolCallOutput({}, None, cancelled=cancelled, worker=self.worker_name, ask=ask)
        result, changed = outcome
        return await self._output(input, result, cancelled, changed)

    async def _staged(
        self, input: ToolExecutionInput, scope: AbstractAsyncContextManager[PolicyScope]
    ) -> tuple[ToolExecutionResult, JsonValue | None] | ApprovalQuestion:
        """`ctx.tools.execute` in the step scheduler's stages, the policy stage inside `scope`;
        a deferred ask ends the call before dispatch (its one result, published on the worker
        only, is `ABORTED_BEFORE_DISPATCH`) and returns the question. Else the result, and the
        arguments the call went on with when the policy changed the model's (else None)."""
        async with scope as policy:
            prepared = await self.tools.prepare(input)
        call = prepared.call
        changed = call.arguments if call.arguments != input.arguments else None
        if prepared.kind == "dispatch":
            if policy.question is not None:
                self.tools.finish(call, aborted_before_dispatch_result())
                return policy.question
            dispatched = await self.tools.dispatch(call)
            result, needs_post = dispatched.result, dispatched.kind == "post-result"
        elif prepared.result is not None:
            result, needs_post = prepared.result, prepared.kind == "post-result"
        else:
            raise RuntimeError(f"the pipeline prepared {prepared.kind!r} without a result")
        if needs_post:
            return await self.tools.finalize(call, result), changed
        return self.tools.finish(call, result), changed

    async def _output(
        self,
        input: ToolCallInput,
        result: ToolExecutionResult,
        cancelled: bool,
        changed: JsonValue | None = None,
    ) -> ToolCallOutput:
        message = message_to_json(tool_result_message(input.call_id, result))
        record: dict[str, Any] = {"turn": input.turn, "step": input.step, "message": message}
        code: str | None = None
        if isinstance(result, ToolFailure) and result.error.info is not None:
            info = result.error.info
            record["error"] = {"name": info.name, "code": info.code}
            code = info.code
        if result.meta is not None:
            record["meta"] = result.meta
        if changed is not None:  # an approver or a hook changed the model's arguments
            record["changed_arguments"] = changed
        record = plain(record)
        spilled = self._spill(input, record)
        refs: dict[str, BlobRef] = {}
        if input.by_reference:
            entry = await self.blobs.externalize(
                _workflow_id(input.session_id),
                LogEntry("tool/result", record),
                inline_bytes=self.inline_bytes,
            )
            record, refs = entry.data, entry.refs
        return ToolCallOutput(
            record=record,
            code=code,
            concludes_turn=not result.is_error and bool(getattr(result, "concludes_turn", False)),
            contexts=[plain(message_to_json(c)) for c in result.additional_contexts],
            cancelled=cancelled,
            spilled=spilled,
            worker=self.worker_name,
            refs=refs,
        )

    def _spill(self, input: ToolCallInput, record: dict[str, Any]) -> str | None:
        """Store a too-big result on the worker; the record keeps a preview and the locator."""
        text = json.dumps(record, ensure_ascii=False)
        if len(text.encode()) <= self.spill_bytes or self.spill_dir is None:
            return None
        folder = self.spill_dir / _safe(input.session_id)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{_safe(input.call_id)}.json"
        path.write_text(text, encoding="utf-8")
        block = record["message"]["content"][0]
        shown = "\n".join(
            str(b.get("text", "")) for b in block["content"] if b.get("type") == "text"
        )
        locator = f"{self.worker_name}:{path}"
        preview = (
            f"{shown[:_PREVIEW_CHARS]}\n[... the full result ({len(text)} bytes of JSON) is "
            f"stored on worker {locator}]"
        )
        block["content"] = [{"type": "text", "text": preview}]
        meta = record.get("meta")
        record["meta"] = {"spilled": locator, "original_meta_bytes": len(json.dumps(meta))}
        return locator

    # -- model steps ---------------------------------------------------------------------------

    @activity.defn(name=LLM_STEP)
    async def llm_step(self, input: LlmStepInput) -> LlmStepOutput:
        """One model call (the `Llm` keeps its idle watchdog and retry policy); heartbeats while
        it streams; a Temporal cancel closes the stream and returns the partial message."""
        controller = AbortController()
        output, _ = await _to_quiescence(
            self._llm_step(input, controller.signal), controller, self.heartbeat_every_s
        )
        return output

    async def _llm_step(self, input: LlmStepInput, signal: AbortSignal) -> LlmStepOutput:
        system = input.system_prompt or default_system_prompt(self.cwd)
        tools = offered(self.tools.schemas(), self.ctx)  # the local loop's: withheld left out
        llm = self.llm
        provider, model = (llm.provider, llm.model) if llm is not None else ("none", "none")
        config: dict[str, Any] = {"provider": provider, "model": model}
        if input.max_tokens is not None:
            config["max_tokens"] = input.max_tokens
        header = plain({"config": config, "system": system, "tools": tools})
        context = {"provider": provider, "model": model}
        known = await self._known(input, header, context)
        if llm is None:
            error = {"message": f"no llm plugin is mounted on worker {self.worker_name}"}
            error["code"] = "LLM_NOT_CONFIGURED"
            return replace(known, finish="error", error=error)
        if input.conversation is not None:
            entries = await conversation.load(self.blobs, input.conversation)
        else:
            entries = list(input.history)
        datas = await self.blobs.resolve_all(entries)
        events = [
            SessionEvent(e.type, i, 0, cast(FrozenDict, snapshot(data)))
            for i, (e, data) in enumerate(zip(entries, datas, strict=True))
        ]
        request = LlmRequest(
            messages=derive_messages(events),
            system=system,
            tools=tools,
            max_tokens=input.max_tokens,
            session_id=input.session_id,
        )
        retries: list[dict[str, Any]] = []

        def on_chunk(chunk: StreamChunk) -> None:
            activity.heartbeat()

        def on_retry(notice: RetryNotice) -> None:
            retries.append(
                plain(
                    {
                        "retry": notice.retry,
                        "delay_ms": notice.delay_ms,
                        "failure": failure_to_json(notice.failure),
                    }
                )
            )

        try:
            generation = await llm.generate(
                request, signal=signal, on_chunk=on_chunk, on_retry=on_retry
            )
        except LlmError as exc:
            partial = exc.partial if signal.aborted else None
            failed: dict[str, Any] = {"message": exc.message, "code": exc.code}
            if exc.failure.status is not None:
                failed["status"] = exc.failure.status
            return replace(
                known,
                message=None if partial is None else plain(message_to_json(partial)),
                finish="error",
                interrupted=partial is not None,
                aborted=signal.aborted,
                error=failed,
                retries=retries,
            )
        except Exception as exc:
            failed = {"message": error_message(exc), "code": "UNKNOWN"}
            return replace(known, finish="error", aborted=signal.aborted, error=failed)
        message = generation.message
        calls = [self._planned(c.id, c.name, c.arguments) for c in message.tool_calls]
        usage = None if generation.usage is None else plain(usage_to_json(generation.usage))
        return replace(
            known,
            message=plain(message_to_json(message)),
            finish=generation.finish.kind,
            calls=calls,
            usage=usage,
            retries=retries,
        )

    async def _known(
        self, input: LlmStepInput, header: dict[str, Any], context: dict[str, Any]
    ) -> LlmStepOutput:
        """The output's parts that do not depend on the model's answer: the header (none when
        the workflow has it, by reference when big — to a workflow that sends its digest, which
        today's do) and the conversation sealed (for a workflow that sends it by reference)."""
        if input.conversation is None:  # an older workflow: the header whole, nothing sealed
            return LlmStepOutput(None, "stop", [], header, context)
        workflow_id = _workflow_id(input.session_id)
        digest = header_digest(header)
        sent: dict[str, Any] | None = header
        header_ref: BlobRef | None = None
        if digest == input.header_sha256:
            sent = None
        elif encoded_size(header) > self.inline_bytes:
            sent, header_ref = None, await self.blobs.put(workflow_id, header)
        sealed: Conversation | None = await conversation.seal(
            self.blobs, workflow_id, input.conversation
        )
        return LlmStepOutput(
            None,
            "stop",
            [],
            sent,
            context,
            header_sha256=digest,
            header_ref=header_ref,
            conversation=sealed,
        )

    def _planned(self, call_id: str, name: str, arguments: str) -> PlannedCall:
        probe = ToolExecutionInput(
            call_id=call_id,
            name=name,
            arguments=parse_arguments(arguments),
            signal=AbortSignal.never(),
        )
        definition = self.tools.get(name)
        budget = None if definition is None else definition.timeout_ms
        mode = self.tools.execution_mode(probe)
        return PlannedCall(call_id, name, arguments, mode, None if budget is None else budget)


async def _heartbeat(every_s: float) -> None:
    while True:
        activity.heartbeat()
        await asyncio.sleep(every_s)


def _heartbeat_interval(every_s: float) -> float:
    """`every_s` (the worker's throttle / 2: a cancel is delivered on the next heartbeat the
    SDK sends), but at least 4 beats per `heartbeat_timeout`."""
    timeout = activity.info().heartbeat_timeout
    if timeout is None:
        return every_s
    return max(0.05, min(every_s, timeout.total_seconds() / 4))


async def _to_quiescence(
    work: Coroutine[Any, Any, _T], controller: AbortController, every_s: float
) -> tuple[_T, bool]:
    """Run `work` in its own task beside a heartbeat task; a cancel of the activity aborts
    `controller` and `work` is still awaited. Returns its value and whether a cancel came."""
    body = asyncio.create_task(work)
    beat = asyncio.create_task(_heartbeat(_heartbeat_interval(every_s)))
    cancelled = False
    try:
        while True:
            try:
                return await asyncio.shield(body), cancelled
            except asyncio.CancelledError:
                cancelled = True
                task = asyncio.current_task()
                if task is not None:
                    task.uncancel()
                if body.done():  # the cancel raced the body's end: report what it published
                    return body.result(), cancelled
                if not controller.signal.aborted:
                    controller.abort(AbortError("the activity was cancelled through Temporal"))
    finally:
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat


def _workflow_id(session_id: str) -> str:
    """The workflow whose payloads a value belongs to: the running activity's (one session's
    blobs share its prefix in the store)."""
    return activity.info().workflow_id or f"tether-session-{session_id}"


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:200] or "_"

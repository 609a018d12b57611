"""`--input-format stream-json`: one session that stays open, driven by JSON lines on stdin —
the way the Claude Agent SDK (`query()`, `ClaudeSDKClient`) drives Claude Code.

Owns `serve`: it opens the agent as `tether run` does, then reads stdin line by line. A `user`
line (`{"type": "user", "message": {"role": "user", "content": "…" | [text blocks]}}`) queues a
turn; turns run one after another in the same session, each written as stream-json
(`system`/`init`, the messages, its `result`: `tether.cli.output`). A `control_request` line is
answered at once by `tether.cli.control` (so `interrupt` reaches a running turn); a
`control_response` settles a request tether sent (`hook_callback`, `can_use_tool`, and the
`mcp_message`s of the application's in-process MCP servers: `tether.cli.sdk_servers`, started
with the session, so stdin is read while they start and the first turn waits for them). At the
end of stdin the queued turns still run — the SDK's `query()` closes stdin right after its
prompt — and then the process exits 0 with its log balanced. When the environment asks for
them, `session_state_changed` records say when a turn runs, waits on the application
(`can_use_tool`) and has ended (`tether.cli.session_state`); a background job's start and end
are `task_started` / `task_notification` records (`tether.cli.task_messages`).

The process dies with its parent: on Linux it asks the kernel for SIGTERM when the process that
started it dies (`PR_SET_PDEATHSIG`), which `tether.core.ending` turns into the abort of the
running turn (its commands' process trees killed, outcomes recorded) and then the exit, so a
SIGKILLed application leaves nothing running. Does not own the records' fields
(`tether.cli.output`) nor the control requests' answers (`tether.cli.control`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import signal as os_signal
import sys
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from ..agent.events import AgentEvent
from ..agent.loop import TurnOutcome
from ..agent.session import SessionStore
from ..agent.unattended import refuse_unattended
from ..core.ending import ProcessEnding
from ..core.signals import AbortController, AbortError, AbortSignal
from ..plugins.approval.service import PERMISSION_REQUEST_EVENT
from ..plugins.hooks.bridge import ClaudeCodeBridge
from ..plugins.hooks.callbacks import callback_hook_set, callback_runner
from ..plugins.hooks.loading import Config as HooksConfig
from ..plugins.jobs.registry import JobRegistry
from ..plugins.permissions import Permissions
from ..tools.arrivals import settle_tools
from .agent_flags import AgentFlags
from .agent_setup import open_flags_agent, run_info
from .control import ControlError, Controls
from .output import HeadlessReport
from .permission_prompt import PermissionPrompt
from .sdk_servers import SdkServers
from .session import announce_ending, latest_session
from .session_state import SessionState
from .task_messages import TaskMessages

__all__ = ["die_with_parent", "serve", "user_text"]

_LINE_LIMIT: Final = 64 * 1024 * 1024
"""The longest stdin line (a message with pasted files is long; a line is one message)."""

_PR_SET_PDEATHSIG: Final = 1


def die_with_parent(parent: int) -> None:
    """Ask the kernel for SIGTERM when the parent dies; if it died before the request (`parent`
    is no longer ours), end now as that signal would. Not Linux: nothing (stdin's end still
    ends the session)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, os_signal.SIGTERM, 0, 0, 0) != 0:
        sys.stderr.write(
            f"tether: prctl(PR_SET_PDEATHSIG): {os.strerror(ctypes.get_errno())}; tether will "
            "not end with the application that started it\n"
        )
    elif os.getppid() != parent:
        os.kill(os.getpid(), os_signal.SIGTERM)


def user_text(message: Mapping[str, object]) -> str | None:
    """The text of a `user` line: its string content, or its text blocks joined; None when it
    has none."""
    inner = message.get("message")
    content = inner.get("content") if isinstance(inner, Mapping) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            str(block.get("text", ""))
            for block in content
            if isinstance(block, Mapping) and block.get("type") == "text"
        ]
        return "\n".join(texts) if texts else None
    return None


def _write(record: Mapping[str, object]) -> None:
    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    sys.stdout.flush()


async def _stdin() -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    return reader


async def _aborted(signal: AbortSignal) -> None:
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def settle(_: object) -> None:
        if not done.done():
            done.set_result(None)

    remove = signal.add_listener(settle)
    try:
        if not signal.aborted:
            await done
    finally:
        remove()


class _Channel:
    """Requests tether sends the SDK (`hook_callback`, `can_use_tool`, `mcp_message`) and their
    answers, by request id."""

    def __init__(self) -> None:
        self._pending: dict[str, asyncio.Future[Mapping[str, object]]] = {}
        self._next = 0

    async def request(
        self, request: Mapping[str, object], *, timeout_ms: float, signal: AbortSignal
    ) -> Mapping[str, object]:
        """Send `request`; its `response`, or raise (an error response, the timeout, the abort:
        then a `control_cancel_request` tells the SDK to stop)."""
        self._next += 1
        request_id = f"tether_{self._next}"
        answer: asyncio.Future[Mapping[str, object]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = answer
        _write({"type": "control_request", "request_id": request_id, "request": dict(request)})
        aborted: asyncio.Future[None] = asyncio.ensure_future(_aborted(signal))
        waiting: set[asyncio.Future[Any]] = {answer, aborted}
        try:
            done, _ = await asyncio.wait(
                waiting, timeout=timeout_ms / 1000, return_when=asyncio.FIRST_COMPLETED
            )
            if answer in done:
                return answer.result()
            _write({"type": "control_cancel_request", "request_id": request_id})
            if aborted in done:
                raise AbortError(signal.reason)
            raise TimeoutError(f"no answer in {timeout_ms / 1000:g} s")
        finally:
            aborted.cancel()
            self._pending.pop(request_id, None)

    async def hook_callback(
        self,
        callback_id: str,
        payload: Mapping[str, object],
        tool_use_id: str | None,
        *,
        timeout_ms: float,
        signal: AbortSignal,
    ) -> Mapping[str, object]:
        request = {
            "subtype": "hook_callback",
            "callback_id": callback_id,
            "input": dict(payload),
            "tool_use_id": tool_use_id,
        }
        return await self.request(request, timeout_ms=timeout_ms, signal=signal)

    def resolve(self, response: Mapping[str, object]) -> None:
        """A `control_response` arrived: settle its request (an unknown id is skipped)."""
        answer = self._pending.get(str(response.get("request_id")))
        if answer is None or answer.done():
            return
        if response.get("subtype") == "error":
            answer.set_exception(RuntimeError(str(response.get("error"))))
        else:
            body = response.get("response")
            answer.set_result(body if isinstance(body, Mapping) else {})


class _Turns:
    """The session's queue of turns and the one running now."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.running: AbortController | None = None
        self.input_tokens = 0

    def interrupt(self) -> bool:
        running = self.running
        if running is None:
            return False
        running.abort(AbortError(None, "interrupted by the SDK client"))
        return True


async def serve(flags: AgentFlags) -> int:
    """Serve one session over stdin/stdout (see the module note); the exit status."""
    die_with_parent(os.getppid())
    sdk_servers = SdkServers.split(flags.mcp_config)
    flags = replace(flags, mcp_config=sdk_servers.configs)
    resume = flags.resume if isinstance(flags.resume, str) else None
    workdir = (flags.cwd or Path.cwd()).resolve()
    if flags.continue_:
        resume = latest_session(SessionStore(), workdir)  # none: a new session, as Claude Code
    reports: list[HeadlessReport] = []

    def on_event(event: AgentEvent) -> None:
        for report in reports:
            report(event)

    async with AsyncExitStack() as stack:
        ending = stack.enter_context(ProcessEnding(on_end=announce_ending))
        agent = await open_flags_agent(
            stack, flags, workdir=workdir, resume=resume, on_event=on_event
        )
        if agent is None:
            return 2
        refuse_unattended(agent.context)
        turns = _Turns()
        channel = _Channel()
        try:
            sdk_servers.attach(agent.context, channel.request)
        except ValueError as exc:
            sys.stderr.write(f"tether: --mcp-config: {exc}\n")
            return 2

        def install_hooks(hooks: Mapping[str, object]) -> None:
            hook_set = callback_hook_set(hooks, "the SDK's hooks")
            shell = agent.context.shell
            config = HooksConfig(project_dir=str(workdir))
            bridge = ClaudeCodeBridge(
                shell, config, hook_set, workdir, ctx=agent.context, runner=callback_runner(channel)
            )
            bridge.register(agent.context)

        controls = Controls(agent, turns.interrupt, lambda: turns.input_tokens, install_hooks)
        state = SessionState(_write, os.environ, lambda: agent.session_id)
        jobs = agent.context.get("jobs")
        if isinstance(jobs, JobRegistry):
            tasks = TaskMessages(_write, lambda: agent.session_id, lambda: agent.loop)
            stack.callback(jobs.on_job_started(tasks.started))
            stack.callback(jobs.on_job_done(tasks.done))
        if flags.permission_prompt_tool == "stdio":
            permissions = agent.context.get("permissions")

            async def asking(
                request: Mapping[str, object], *, timeout_ms: float, signal: AbortSignal
            ) -> Mapping[str, object]:
                """`can_use_tool`: the session waits on the application meanwhile."""
                state.change("requires_action")
                try:
                    return await channel.request(request, timeout_ms=timeout_ms, signal=signal)
                finally:
                    state.change("running")

            prompt = PermissionPrompt(
                asking,
                permissions if isinstance(permissions, Permissions) else None,
                turns.interrupt,
            )
            agent.context.on(PERMISSION_REQUEST_EVENT, prompt)

        async def run_turns() -> None:
            # the SDK's servers answer over stdin: it is read from now on, while they start
            await settle_tools(agent.context, signal=ending.signal)
            while (text := await turns.queue.get()) is not None:
                if ending.signal.aborted:
                    return
                controller = AbortController()
                turns.running = controller
                report = HeadlessReport(
                    "stream-json",
                    run_info(agent, workdir, flags),
                    sys.stdout,
                    partial_messages=flags.include_partial_messages,
                )
                state.change("running")
                report.start()
                reports[:] = [report]
                outcome: TurnOutcome | None = None
                with AbortSignal.any(controller.signal, ending.signal) as signal:
                    try:
                        outcome = (await agent.run(text, signal=signal)).outcome
                    finally:
                        turns.running = None
                        reports.clear()
                turns.input_tokens += report.input_tokens
                report.finish(outcome, exit_code=0 if outcome and outcome.completed else 1)
                state.change("idle")

        worker = asyncio.create_task(run_turns())
        stdin = await _stdin()
        ended = asyncio.create_task(_aborted(ending.signal))
        try:
            while True:
                line_task = asyncio.ensure_future(stdin.readline())
                await asyncio.wait({line_task, ended}, return_when=asyncio.FIRST_COMPLETED)
                if not line_task.done():
                    line_task.cancel()
                    break
                line = line_task.result()
                if not line:
                    break
                _dispatch(line, turns, controls, channel)
        finally:
            await turns.queue.put(None)
            await worker
            ended.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ended
        return ending.exit_code(0)


def _dispatch(line: bytes, turns: _Turns, controls: Controls, channel: _Channel) -> None:
    """One stdin line: a user message is queued, a control request answered, the rest said
    on stderr and skipped."""
    if not line.strip():
        return
    try:
        message = json.loads(line)
    except ValueError as exc:
        sys.stderr.write(f"tether: stdin: not a JSON line ({exc}); skipped\n")
        return
    if not isinstance(message, dict):
        sys.stderr.write("tether: stdin: a line is not a JSON object; skipped\n")
        return
    kind = message.get("type")
    if kind == "user":
        text = user_text(message)
        if text is None:
            sys.stderr.write("tether: stdin: a user message without text; skipped\n")
        else:
            turns.queue.put_nowait(text)
    elif kind == "control_request":
        _answer(message, controls)
    elif kind == "control_response":
        response = message.get("response")
        if isinstance(response, Mapping):
            channel.resolve(response)
    elif kind not in ("keep_alive", "update_environment_variables"):
        sys.stderr.write(f"tether: stdin: unknown message type {kind!r}; skipped\n")


def _answer(message: Mapping[str, object], controls: Controls) -> None:
    request_id = message.get("request_id")
    request = message.get("request")
    try:
        if not isinstance(request, Mapping):
            raise ControlError("a control_request without a request object")
        response: dict[str, object] = {
            "subtype": "success",
            "request_id": request_id,
            "response": controls.answer(request),
        }
    except ControlError as exc:
        response = {"subtype": "error", "request_id": request_id, "error": str(exc)}
    _write({"type": "control_response", "response": response})

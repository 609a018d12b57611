"""A parent agent loop with real tools and the `subagents` plugin, over the scripted model.

`Rig` mounts the tool runtime, the timeout policy, the shell (real processes), `bash`, `jobs`,
the file and search tools and `subagents` on a fresh context; its agents talk to a
`ScriptedModelServer` on 127.0.0.1. `Router` answers each request by the text of its first user
message — the parent's task, or the prompt a `task` call gave a child — so concurrent children
each get their own script.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import psutil

from tether import AbortController
from tether.agent.llm import LlmConfig, RetryPolicy
from tether.agent.llm.plugin import build_llm
from tether.agent.llm.service import Llm
from tether.agent.loop import AgentLoop, AgentSettings
from tether.agent.session import SessionEvent, SessionLog, SessionStore
from tether.agent.subagents import plugin as subagents_plugin
from tether.kernel import Context
from tether.plugins import timeout_policy
from tether.plugins.fs import plugin as fs_plugin
from tether.plugins.jobs import plugin as jobs_plugin
from tether.plugins.search import tools as search_tools
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.testing.scripted_model import (
    RecordedRequest,
    ScriptedModelServer,
    ScriptedResponse,
    http_error,
)
from tether.tools import ToolRuntime

from ...patience import PATIENCE_S
from ...processes import group_gone, group_members

__all__ = [
    "GRACE_MS",
    "Rig",
    "Router",
    "alive",
    "bash_call",
    "child_running",
    "first_user_text",
    "group_gone",
    "group_members",
    "results",
    "task_call",
    "types",
]

GRACE_MS = 1000
"""The shell's SIGTERM → SIGKILL grace in these tests."""


def task_call(
    call_id: str,
    prompt: str,
    subagent_type: str = "general-purpose",
    *,
    background: bool = False,
    description: str = "a subtask",
) -> tuple[str, str, str]:
    """A `task` tool call for `tool_calls_reply`."""
    args: dict[str, object] = {
        "description": description,
        "prompt": prompt,
        "subagent_type": subagent_type,
    }
    if background:
        args["run_in_background"] = True
    return (call_id, "task", json.dumps(args))


def first_user_text(request: RecordedRequest) -> str:
    for message in request.messages:
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(
                    str(part.get("text", "")) for part in content if isinstance(part, dict)
                )
    return ""


class Router:
    """Scripted responses per conversation, keyed by the first user message's text."""

    def __init__(self) -> None:
        self.queues: dict[str, list[ScriptedResponse]] = defaultdict(list)
        self.seen: dict[str, list[RecordedRequest]] = defaultdict(list)
        self.arrived = asyncio.Condition()

    def script(self, prompt: str, *responses: ScriptedResponse) -> None:
        self.queues[prompt].extend(responses)

    def __call__(self, request: RecordedRequest) -> ScriptedResponse:
        key = first_user_text(request)
        self.seen[key].append(request)
        queue = self.queues.get(key)
        if not queue:
            return http_error(500, f"router: nothing scripted for {key!r}")
        return queue.pop(0)


class Rig:
    """The context, the model server, the session store and the agents of one test."""

    def __init__(self, ctx: Context, server: ScriptedModelServer, router: Router, tmp: Path):
        self.ctx = ctx
        self.server = server
        self.router = router
        self.tmp = tmp
        self.work = tmp / "work"
        self.store = SessionStore(tmp / "sessions")
        self.llms: list[Llm] = []
        self.logs: list[SessionLog] = []

    @classmethod
    async def start(
        cls,
        tmp: Path,
        server: ScriptedModelServer,
        router: Router,
        *,
        subagents: Mapping[str, object] | None = None,
    ) -> Rig:
        work = tmp / "work"
        work.mkdir(exist_ok=True)
        ctx = Context()
        await ctx.plugin(ToolRuntime)
        await ctx.plugin(timeout_policy)
        await ctx.plugin(shell_plugin, {"grace_ms": GRACE_MS, "cwd": str(work)})
        await ctx.plugin(jobs_plugin)
        await ctx.plugin(bash_plugin)
        await ctx.plugin(fs_plugin, {"root": str(work)})
        await ctx.plugin(search_tools)
        config: dict[str, object] = {
            "project_dir": str(work),
            "user_agents_dir": str(tmp / "user-agents"),
        }
        config.update(subagents or {})
        await ctx.plugin(subagents_plugin, config)
        return cls(ctx, server, router, tmp)

    def llm(self) -> Llm:
        llm = build_llm(
            LlmConfig(
                provider="openai",
                base_url=self.server.base_url,
                model="scripted",
                retry=RetryPolicy(mode="off"),
            ),
            environ={},
        )
        self.llms.append(llm)
        return llm

    def parent(self) -> Any:
        """A top-level agent loop (depth 0) over a new session."""
        log = self.store.create(cwd=self.work)
        self.logs.append(log)
        return AgentLoop(
            tools=self.ctx.tools.runtime,
            llm=self.llm(),
            session=log,
            settings=AgentSettings(cwd=self.work),
            ctx=self.ctx,
        )

    def children_of(self, parent_id: str) -> list[str]:
        """The ids of the sessions whose header names `parent_id` as their parent."""
        found = []
        for summary in self.store.list_sessions():
            header = self.store.load(summary.id).header
            if header.parent_session == parent_id:
                found.append(summary.id)
        return sorted(found)

    async def aclose(self) -> None:
        await self.ctx.dispose()
        for log in self.logs:
            log.close()
        for llm in self.llms:
            await llm.aclose()


def live() -> AbortController:
    return AbortController()


def results(events: Sequence[SessionEvent]) -> list[tuple[str, Any]]:
    """`(call_id, error or None)` per `tool/result`, in log order."""
    out: list[tuple[str, Any]] = []
    for event in events:
        if event.type == "tool/result":
            data: Any = event.data
            error = data.get("error")
            out.append((data["message"]["content"][0]["call_id"], error and dict(error)))
    return out


def types(events: Sequence[SessionEvent]) -> list[str]:
    """Event types, each run of `assistant/chunk` collapsed to one `assistant/chunk*`."""
    out: list[str] = []
    for event in events:
        name = "assistant/chunk*" if event.type == "assistant/chunk" else event.type
        if not (name == "assistant/chunk*" and out and out[-1] == name):
            out.append(name)
    return out


async def child_running(argv: list[str], *, timeout_s: float = PATIENCE_S) -> psutil.Process:
    """Poll our descendants until one runs `argv` (bounded)."""
    me = psutil.Process()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        for child in me.children(recursive=True):
            try:
                if child.cmdline() == argv:
                    return child
            except psutil.Error:
                continue
        await asyncio.sleep(0.01)
    raise AssertionError(f"no child process ran {argv}")


def alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def bash_call(call_id: str, command: str) -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": command, "description": "a command"}))

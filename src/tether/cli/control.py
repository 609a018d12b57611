"""The control channel of `--input-format stream-json`: what the Claude Agent SDK asks tether.

Owns `Controls`, which answers each `control_request` the SDK writes on stdin with one
`control_response` line (same `request_id`; `subtype` `success` with a `response` object, or
`error` with an `error` text naming what is not supported and what to do instead):

    initialize           {"commands", "output_style", "available_output_styles", "models",
                          "account", "pid"}; its `hooks` (callback ids per event and matcher)
                          become hooks of the session (`tether.plugins.hooks.callbacks`); a
                          hooks object tether cannot read, and SDK-defined `agents`, are an
                          error (a guard that silently does not run fails open)
    interrupt            aborts the running turn (its calls end ABORTED, queued ones
                          ABORTED_BEFORE_DISPATCH, the log balanced); the turn's `result` follows
    set_permission_mode  switches the permissions plugin's mode
    set_model            the next model request (of the running turn too) asks that model on
                          the session's route; `null`: the model the session started with
    mcp_status           {"mcpServers": [{"name", "status"}]}
    get_context_usage    {"totalTokens", "maxTokens", "model"}
    stop_task            stops one background job (`bash-1`: the id a `run_in_background`
                          result names); the turn goes on
    rewind_files, mcp_* (others)   an error response saying why

Does not own reading stdin or running turns (`tether.cli.stream_input`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..agent.api import Agent
from ..agent.llm import Llm
from ..plugins.jobs.model import JobForbidden, JobNotFound
from ..plugins.jobs.registry import JobRegistry
from ..plugins.permissions import Permissions

__all__ = ["ControlError", "Controls"]


class ControlError(Exception):
    """A request tether cannot honour; the message is the error response's text."""


@dataclass
class Controls:
    """Answers the SDK's control requests for one session."""

    agent: Agent
    interrupt: Callable[[], bool]  # abort the running turn; False when none runs
    tokens: Callable[[], int]  # the session's input tokens so far
    hooks: Callable[[Mapping[str, object]], None]  # install the SDK's hook callbacks
    started_model: str = field(init=False)

    def __post_init__(self) -> None:
        self.started_model = self.agent.llm.model

    def answer(self, request: Mapping[str, object]) -> dict[str, object]:
        """The `response` object of a success, or ControlError."""
        subtype = request.get("subtype")
        if subtype == "initialize":
            return self._initialize(request)
        if subtype == "interrupt":
            self.interrupt()
            return {}
        if subtype == "set_permission_mode":
            return self._set_mode(request.get("mode"))
        if subtype == "mcp_status":
            return {"mcpServers": self._servers()}
        if subtype == "get_context_usage":
            window = self.agent.context_window
            return {
                "totalTokens": self.tokens(),
                "maxTokens": window,
                "model": self.agent.llm.model,
            }
        if subtype == "set_model":
            return self._set_model(request.get("model"))
        if subtype == "rewind_files":
            raise ControlError(
                "rewind_files: tether keeps no file checkpoints, so there is nothing to rewind "
                "to; use git to restore files"
            )
        if subtype == "stop_task":
            return self._stop_task(request.get("task_id"))
        raise ControlError(f"unsupported control request {subtype!r} (tether does not have it)")

    def _initialize(self, request: Mapping[str, object]) -> dict[str, object]:
        hooks = request.get("hooks")
        if hooks:
            if not isinstance(hooks, Mapping):
                raise ControlError("initialize: hooks is not an object of events")
            try:
                self.hooks(hooks)
            except ValueError as exc:
                raise ControlError(f"initialize: hooks: {exc}") from None
        if request.get("agents"):
            raise ControlError(
                "initialize: SDK-defined agents are not supported by tether yet; define them "
                "as .claude/agents/<name>.md files"
            )
        model = self.agent.llm.model
        return {
            "commands": [],
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": [{"value": model, "displayName": model, "description": "tether's route"}],
            "account": {},
            "pid": os.getpid(),
        }

    def _set_model(self, model: object) -> dict[str, object]:
        """The next model request (of this turn or a later one) asks `model` on the same route;
        None: the model the session started with."""
        if model is None:
            model = self.started_model
        if not isinstance(model, str) or not model.strip():
            raise ControlError(f"set_model: {model!r} is not a model name")
        loop = self.agent.loop
        current = loop.llm
        loop.llm = Llm(
            current.transport,
            provider=current.provider,
            model=model,
            retry=current.retry_policy,
        )
        return {}

    def _stop_task(self, task_id: object) -> dict[str, object]:
        """Stop one background job of the session (its process tree ends; the running turn goes
        on, and the model reads the job's end as `job_kill` would leave it)."""
        jobs = self.agent.context.get("jobs")
        if not isinstance(jobs, JobRegistry):
            raise ControlError("stop_task: this session has no background jobs (no jobs plugin)")
        try:
            jobs.kill(str(task_id), caller=self.agent.loop, reason="stopped by the SDK client")
        except (JobNotFound, JobForbidden):
            raise ControlError(
                f"stop_task: no background task {task_id!r} of this session; the ids are the "
                "job ids the bash tool's results name (bash-1, …)"
            ) from None
        except Exception as exc:  # the job's own stop failed: it still runs
            raise ControlError(f"stop_task: {task_id!r} could not be stopped: {exc}") from None
        return {}

    def _set_mode(self, mode: object) -> dict[str, object]:
        permissions = self.agent.context.get("permissions")
        if not isinstance(permissions, Permissions):
            raise ControlError("set_permission_mode: this session has no permissions plugin")
        try:
            permissions.set_mode(str(mode))
        except ValueError as exc:
            raise ControlError(f"set_permission_mode: {exc}") from None
        return {}

    def _servers(self) -> list[dict[str, str]]:
        listing = getattr(self.agent.context.get("mcp"), "servers", None)
        servers = listing() if callable(listing) else []
        return [{"name": str(s.name), "status": str(s.status)} for s in servers]

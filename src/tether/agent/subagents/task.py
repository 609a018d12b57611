"""The `task` tool: Claude Code's Task — start a subagent of a named type on a prompt.

Owns the definition (parameters `description`, `prompt`, `subagent_type`, `run_in_background`
— the model is `task_args.py`, imported by the first call; a description listing the types),
the checks before a child exists (a known type, a non-empty prompt, the depth limit), the
foreground run and its outcomes, the concurrency classifier, and the value and its rendering.
Background runs are `background.py`; the child itself `child.py`.

Outcomes of a foreground call (the child's turn signal is this call's `exec.signal`):

    the child's turn completed            success: its final text
    aborted before the child's first      ABORTED_BEFORE_DISPATCH (no child tool ran)
      model request
    aborted after it                      ABORTED, once the child is disposed (every child tool
                                          call settled, its process groups gone, its log
                                          balanced, its scope disposed); a deferred context
                                          gives the caller the child's partial output and
                                          session id
    the child's turn ended otherwise      SUBAGENT_FAILED naming the session and the reason
      (error, blocked, max-steps, ...)
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Final, Literal, NotRequired

from typing_extensions import TypedDict

from ...core.json import JsonValue
from ...tools.definition import ToolDefinition, ToolOutput, define_tool
from ...tools.errors import ToolCallAborted
from ...tools.execution import ToolRunContext
from ...tools.layers import RUN_CODE
from ...tools.model_ref import ModelRef
from ...tools.results import ContentBlock, UserMessage, text_content, user_message
from .readonly import read_only_type

if TYPE_CHECKING:
    # a child, its errors and background runs are imported by the first call, not at boot
    # (issue 36), as the argument model
    from ..loop import TurnOutcome
    from .agent_types import AgentType
    from .child import Child
    from .errors import SubagentFailed
    from .host import Host
    from .task_args import TaskParameters

__all__ = ["TASK", "TaskParameters", "TaskValue", "aborted_context", "description", "task_tool"]


def __getattr__(attribute: str) -> object:
    """`TaskParameters`, from `task_args`, for code that imports it from here."""
    if attribute == "TaskParameters":
        from .task_args import TaskParameters

        return TaskParameters
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


TASK: Final = "task"

_INTRO: Final = (
    "Launch a new agent (a subagent) to handle a complex, multi-step task on its own. It works "
    "in a fresh context with the tools of its type and returns one final report; you see "
    "nothing else of its work, so tell it everything it needs in the prompt and say what to "
    "report back.\n\nAvailable agent types and the tools they have access to:\n"
)
_USAGE: Final = (
    "\n\nUsage notes:\n"
    "- Set subagent_type to one of the types above.\n"
    "- Launch several agents at once (several task calls in one message) when the work is "
    "independent; agents whose tools are read-only run concurrently.\n"
    "- Set run_in_background: true to get a job id at once; read the result with job_output "
    "and stop the agent with job_kill.\n"
    "- The agent's result is not shown to the user: summarize it for them."
)


class TaskValue(TypedDict):
    status: Literal["completed", "running"]
    session_id: str
    agent_type: str
    text: NotRequired[str]
    job_id: NotRequired[str]


def description(host: Host, visible: Collection[str], *, code_mode: bool = False) -> str:
    """The tool description: the intro, one line per type with the tools its children get of
    `visible` (the caller's tools now), the usage notes. In Code Mode a child's model is sent
    only `run_code`, whose programs call the rest: the line says so."""

    def tools(agent_type: AgentType) -> str:
        reach = agent_type.describe_tools(visible)
        return f"{RUN_CODE}, whose programs call: {reach}" if code_mode else reach

    lines = [
        f"- {t.name}: {' '.join(t.description.split())} (Tools: {tools(t)})" for t in host.catalog
    ]
    return _INTRO + "\n".join(lines) + _USAGE


def _render(_args: object, value: JsonValue) -> Sequence[ContentBlock]:
    if not isinstance(value, dict):
        return text_content(str(value))
    if value.get("status") == "running":
        return text_content(
            f"Started a {value.get('agent_type')} agent in the background as job "
            f"{value.get('job_id')} (session {value.get('session_id')}). Read its result with "
            "job_output; stop it with job_kill."
        )
    text = str(value.get("text") or "")
    return text_content(text or "(the agent finished without a final message)")


def _presentation(_args: object, value: JsonValue) -> JsonValue:
    if not isinstance(value, dict):
        return None
    meta: dict[str, JsonValue] = {
        "subagent_session": value.get("session_id"),
        "agent_type": value.get("agent_type"),
    }
    if "job_id" in value:
        meta["job_id"] = value.get("job_id")
    return meta


def aborted_context(child: Child) -> UserMessage:
    """What an aborted call tells the caller: the child's session and partial output."""
    output = child.output()
    said = f"Its partial output:\n{output}" if output else "It had produced no output."
    return user_message(
        f"The {child.agent_type.name} agent (session {child.session_id}) was aborted before it "
        f"finished; its tool calls were stopped and recorded. {said}",
        {"kind": "plugin", "plugin": "subagents", "session_id": child.session_id},
    )


def _failure(child: Child, outcome: TurnOutcome) -> SubagentFailed:
    from .errors import SubagentFailed

    reason = outcome.reason
    error = reason.get("error")
    if isinstance(error, dict):
        detail = f"{error.get('code')}: {error.get('message')}"
    elif outcome.kind == "blocked":
        detail = f"blocked: {reason.get('message')}"
    else:
        detail = outcome.kind
    output = child.output()
    tail = f"; its last output:\n{output}" if output else ""
    return SubagentFailed(
        f"the {child.agent_type.name} agent (session {child.session_id}) did not complete: "
        f"{detail}{tail}"
    )


def task_tool(host: Host, described: str) -> ToolDefinition:
    """The `task` definition for one mounted plugin, with the description `described`
    (`description(...)`; the plugin renews it when the tools change)."""

    def is_concurrency_safe(args: TaskParameters) -> bool:
        agent_type = host.catalog.get(args.subagent_type)
        return agent_type is not None and read_only_type(agent_type, host.read_only)

    async def execute(args: TaskParameters, exec: ToolRunContext) -> TaskValue:
        from .background import start_background  # at the first call (issue 36)
        from .child import caller_of, spawn_child
        from .errors import ChildNotStarted, DelegationTooDeep, UnknownSubagentType

        caller = caller_of(exec.agent)
        agent_type = host.catalog.get(args.subagent_type)
        if agent_type is None:
            raise UnknownSubagentType(args.subagent_type, host.catalog.names())
        if not args.prompt.strip():
            raise ValueError("prompt must say what the agent should do; got an empty prompt")
        if caller.depth >= host.max_depth:
            raise DelegationTooDeep(caller.depth, host.max_depth)
        if exec.signal.aborted:
            raise ChildNotStarted()
        if args.run_in_background:
            return await start_background(
                host, caller, agent_type, args.description, args.prompt, exec
            )
        child = await spawn_child(host, caller, agent_type, call_id=exec.call_id, background=False)
        try:
            outcome = await child.run(args.prompt, signal=exec.signal)
        finally:
            await child.dispose()
        if exec.signal.aborted or outcome.kind == "aborted":
            if not child.model_called:
                raise ChildNotStarted()
            exec.defer_context(aborted_context(child))
            raise ToolCallAborted()
        if not outcome.completed:
            raise _failure(child, outcome)
        return {
            "status": "completed",
            "session_id": child.session_id,
            "agent_type": agent_type.name,
            "text": outcome.text,
        }

    return define_tool(
        name=TASK,
        description=described,
        parameters=ModelRef("tether.agent.subagents.task_args:TaskParameters"),
        output=ToolOutput(schema=TaskValue, render=_render, presentation_meta=_presentation),
        execute=execute,
        is_concurrency_safe=is_concurrency_safe,
    )

"""tether: an agent harness whose tool runtime gets cancellation right.

The public facade. `__all__` is what a newcomer needs: `Agent` and `LlmConfig`, `tool` and the
`ToolRunContext` a body receives, the turn's results and stream events, the signal a caller
owns, the policy decisions a check returns, the abort and timeout codes, `run_process`, and the
scripted model for tests (docs/library-reference.md lists them). The rest lives in submodules
that say what they hold: `tether.signals` (cancellation), `tether.timeouts` (deadlines and
watchdogs), `tether.tools` (the registry, definitions, results, decisions, events),
`tether.agent` (the agent, its events and results), `tether.kernel` (`Context`, plugins),
`tether.testing` (the scripted model, a manual clock), `tether.plugins.*`. Every name of
CONTRACT §1–§5 stays importable from here as well, loaded on first use (PEP 562
`__getattr__`), so `import tether` itself costs nothing and a command line that needs only part
of the library does not pay for the rest.
"""

from __future__ import annotations

from .core.lazy import lazy_names

__version__ = "0.1.0"
"""tether's version, its one source (the wheel's metadata and `tether --version` read it)."""

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing alone costs ~10 ms
if TYPE_CHECKING:
    from .agent import Agent as Agent
    from .agent import AgentEvent as AgentEvent
    from .agent import LlmConfig as LlmConfig
    from .agent import Notice as Notice
    from .agent import ReasoningDelta as ReasoningDelta
    from .agent import ResponseComplete as ResponseComplete
    from .agent import Retrying as Retrying
    from .agent import RunResult as RunResult
    from .agent import RunStream as RunStream
    from .agent import StepStarted as StepStarted
    from .agent import TextDelta as TextDelta
    from .agent import ToolCallFinished as ToolCallFinished
    from .agent import ToolCallRecord as ToolCallRecord
    from .agent import ToolCallStarted as ToolCallStarted
    from .agent import TurnFinished as TurnFinished
    from .agent import TurnOutcome as TurnOutcome
    from .core.errors import HarnessError as HarnessError
    from .core.json import FrozenDict as FrozenDict
    from .core.json import FrozenList as FrozenList
    from .core.json import JsonValue as JsonValue
    from .core.signals import AbortController as AbortController
    from .core.signals import AbortError as AbortError
    from .core.signals import AbortSignal as AbortSignal
    from .core.signals import FusedSignal as FusedSignal
    from .core.timeout import MAX_TIMER_DELAY_MS as MAX_TIMER_DELAY_MS
    from .core.timeout import Deadline as Deadline
    from .core.timeout import IdleWatchdog as IdleWatchdog
    from .core.timeout import TimeoutReason as TimeoutReason
    from .core.timeout import clamp_timeout as clamp_timeout
    from .core.timeout import deadline as deadline
    from .core.timeout import idle_watchdog as idle_watchdog
    from .core.timeout import timeout_of as timeout_of
    from .kernel import Context as Context
    from .plugins.sandbox import SandboxMode as SandboxMode
    from .plugins.sandbox import SandboxPolicy as SandboxPolicy
    from .plugins.shell import run_process as run_process
    from .testing.scripted_model import ScriptedModelServer as ScriptedModelServer
    from .tools import MISSING as MISSING
    from .tools import TOOL_ABORTED as TOOL_ABORTED
    from .tools import TOOL_ABORTED_BEFORE_DISPATCH as TOOL_ABORTED_BEFORE_DISPATCH
    from .tools import TOOL_TIMEOUT as TOOL_TIMEOUT
    from .tools import Accept as Accept
    from .tools import Allow as Allow
    from .tools import ApprovalOutcome as ApprovalOutcome
    from .tools import ApprovalRequest as ApprovalRequest
    from .tools import Ask as Ask
    from .tools import Block as Block
    from .tools import ContentBlock as ContentBlock
    from .tools import Deny as Deny
    from .tools import ErrorDetail as ErrorDetail
    from .tools import ErrorInfo as ErrorInfo
    from .tools import PostToolDecision as PostToolDecision
    from .tools import PreToolDecision as PreToolDecision
    from .tools import SlowStop as SlowStop
    from .tools import ToolArgsError as ToolArgsError
    from .tools import ToolCallAborted as ToolCallAborted
    from .tools import ToolDefinition as ToolDefinition
    from .tools import ToolDispatchExecution as ToolDispatchExecution
    from .tools import ToolExecution as ToolExecution
    from .tools import ToolExecutionInput as ToolExecutionInput
    from .tools import ToolExecutionResult as ToolExecutionResult
    from .tools import ToolExecutionToken as ToolExecutionToken
    from .tools import ToolFailure as ToolFailure
    from .tools import ToolNotFoundError as ToolNotFoundError
    from .tools import ToolOutput as ToolOutput
    from .tools import ToolOutputError as ToolOutputError
    from .tools import ToolRunContext as ToolRunContext
    from .tools import ToolRuntime as ToolRuntime
    from .tools import ToolSuccess as ToolSuccess
    from .tools import ToolTimeoutError as ToolTimeoutError
    from .tools import UserMessage as UserMessage
    from .tools import define_tool as define_tool
    from .tools import tool as tool
    from .tools import user_message as user_message

_SOURCES: dict[str, str] = {
    "SandboxMode": "tether.plugins.sandbox",
    "SandboxPolicy": "tether.plugins.sandbox",
    "run_process": "tether.plugins.shell",
    "ScriptedModelServer": "tether.testing.scripted_model",
    "Agent": "tether.agent",
    "AgentEvent": "tether.agent",
    "Notice": "tether.agent",
    "ReasoningDelta": "tether.agent",
    "ResponseComplete": "tether.agent",
    "Retrying": "tether.agent",
    "RunResult": "tether.agent",
    "RunStream": "tether.agent",
    "StepStarted": "tether.agent",
    "TextDelta": "tether.agent",
    "ToolCallFinished": "tether.agent",
    "ToolCallRecord": "tether.agent",
    "ToolCallStarted": "tether.agent",
    "TurnFinished": "tether.agent",
    "TurnOutcome": "tether.agent",
    "LlmConfig": "tether.agent",
    "HarnessError": "tether.core.errors",
    "FrozenDict": "tether.core.json",
    "FrozenList": "tether.core.json",
    "JsonValue": "tether.core.json",
    "AbortController": "tether.core.signals",
    "AbortError": "tether.core.signals",
    "AbortSignal": "tether.core.signals",
    "FusedSignal": "tether.core.signals",
    "MAX_TIMER_DELAY_MS": "tether.core.timeout",
    "Deadline": "tether.core.timeout",
    "IdleWatchdog": "tether.core.timeout",
    "TimeoutReason": "tether.core.timeout",
    "clamp_timeout": "tether.core.timeout",
    "deadline": "tether.core.timeout",
    "idle_watchdog": "tether.core.timeout",
    "timeout_of": "tether.core.timeout",
    "Context": "tether.kernel",
    "MISSING": "tether.tools",
    "TOOL_ABORTED": "tether.tools",
    "TOOL_ABORTED_BEFORE_DISPATCH": "tether.tools",
    "TOOL_TIMEOUT": "tether.tools",
    "Accept": "tether.tools",
    "Allow": "tether.tools",
    "ApprovalOutcome": "tether.tools",
    "ApprovalRequest": "tether.tools",
    "Ask": "tether.tools",
    "Block": "tether.tools",
    "ContentBlock": "tether.tools",
    "Deny": "tether.tools",
    "ErrorDetail": "tether.tools",
    "ErrorInfo": "tether.tools",
    "SlowStop": "tether.tools",
    "PostToolDecision": "tether.tools",
    "PreToolDecision": "tether.tools",
    "ToolArgsError": "tether.tools",
    "ToolCallAborted": "tether.tools",
    "ToolDefinition": "tether.tools",
    "ToolDispatchExecution": "tether.tools",
    "ToolExecution": "tether.tools",
    "ToolExecutionInput": "tether.tools",
    "ToolExecutionResult": "tether.tools",
    "ToolExecutionToken": "tether.tools",
    "ToolFailure": "tether.tools",
    "ToolNotFoundError": "tether.tools",
    "ToolOutput": "tether.tools",
    "ToolOutputError": "tether.tools",
    "ToolRunContext": "tether.tools",
    "ToolRuntime": "tether.tools",
    "ToolSuccess": "tether.tools",
    "ToolTimeoutError": "tether.tools",
    "UserMessage": "tether.tools",
    "define_tool": "tether.tools",
    "tool": "tether.tools",
    "user_message": "tether.tools",
}
"""Public name → the module that defines it."""


__getattr__, __dir__ = lazy_names(globals(), _SOURCES)

__all__ = [
    "TOOL_ABORTED",
    "TOOL_ABORTED_BEFORE_DISPATCH",
    "TOOL_TIMEOUT",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "Agent",
    "AgentEvent",
    "Allow",
    "Ask",
    "Deny",
    "LlmConfig",
    "RunResult",
    "ScriptedModelServer",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallRecord",
    "ToolCallStarted",
    "ToolExecution",
    "ToolRunContext",
    "TurnFinished",
    "TurnOutcome",
    "run_process",
    "tool",
]
"""What a newcomer needs (docs/library-reference.md); every other public name is importable
from here too, and from the submodule that holds it."""

"""tether: an agent harness whose tool runtime gets cancellation right.

The public facade: every name of CONTRACT §1–§5 is importable from here. Modules that are also
public paths: `tether.tools` (ToolRuntime), `tether.plugins.timeout_policy`, `tether.kernel`.
"""

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

__all__ = [
    "MAX_TIMER_DELAY_MS",
    "MISSING",
    "TOOL_ABORTED",
    "TOOL_ABORTED_BEFORE_DISPATCH",
    "TOOL_TIMEOUT",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "Accept",
    "Allow",
    "ApprovalOutcome",
    "ApprovalRequest",
    "Ask",
    "Block",
    "ContentBlock",
    "Context",
    "Deadline",
    "Deny",
    "ErrorDetail",
    "ErrorInfo",
    "FrozenDict",
    "FrozenList",
    "FusedSignal",
    "HarnessError",
    "IdleWatchdog",
    "JsonValue",
    "PostToolDecision",
    "PreToolDecision",
    "TimeoutReason",
    "ToolArgsError",
    "ToolCallAborted",
    "ToolDefinition",
    "ToolDispatchExecution",
    "ToolExecution",
    "ToolExecutionInput",
    "ToolExecutionResult",
    "ToolExecutionToken",
    "ToolFailure",
    "ToolNotFoundError",
    "ToolOutput",
    "ToolOutputError",
    "ToolRunContext",
    "ToolRuntime",
    "ToolSuccess",
    "ToolTimeoutError",
    "UserMessage",
    "clamp_timeout",
    "deadline",
    "define_tool",
    "idle_watchdog",
    "timeout_of",
    "tool",
    "user_message",
]

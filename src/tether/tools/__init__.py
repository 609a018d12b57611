"""tether.tools: the tool registry and execution pipeline (public path for `ToolRuntime`)."""

from .approval import ApprovalOutcome as ApprovalOutcome
from .approval import ApprovalRequest as ApprovalRequest
from .decisions import MISSING as MISSING
from .decisions import Accept as Accept
from .decisions import Allow as Allow
from .decisions import Ask as Ask
from .decisions import Block as Block
from .decisions import Deny as Deny
from .decisions import PostToolDecision as PostToolDecision
from .decisions import PreToolDecision as PreToolDecision
from .definition import ToolDefinition as ToolDefinition
from .definition import ToolOutput as ToolOutput
from .definition import define_tool as define_tool
from .definition import tool as tool
from .errors import JsonSchemaError as JsonSchemaError
from .errors import ToolArgsError as ToolArgsError
from .errors import ToolCallAborted as ToolCallAborted
from .errors import ToolNotFoundError as ToolNotFoundError
from .errors import ToolOutputError as ToolOutputError
from .errors import ToolTimeoutError as ToolTimeoutError
from .events import CHANGE as CHANGE
from .events import EXECUTE as EXECUTE
from .events import POST_EXECUTE as POST_EXECUTE
from .events import PRE_EXECUTE as PRE_EXECUTE
from .events import RESULT as RESULT
from .events import SETTLE as SETTLE
from .events import SLOW_STOP_EVENT as SLOW_STOP_EVENT
from .execution import ToolDispatchExecution as ToolDispatchExecution
from .execution import ToolExecution as ToolExecution
from .execution import ToolExecutionInput as ToolExecutionInput
from .execution import ToolExecutionToken as ToolExecutionToken
from .execution import ToolRunContext as ToolRunContext
from .model_ref import ModelRef as ModelRef
from .pipeline import Dispatched as Dispatched
from .pipeline import Prepared as Prepared
from .registry import ToolGuard as ToolGuard
from .registry import ToolRuntime as ToolRuntime
from .registry import ToolsView as ToolsView
from .results import TOOL_ABORTED as TOOL_ABORTED
from .results import TOOL_ABORTED_BEFORE_DISPATCH as TOOL_ABORTED_BEFORE_DISPATCH
from .results import TOOL_TIMEOUT as TOOL_TIMEOUT
from .results import ContentBlock as ContentBlock
from .results import ErrorDetail as ErrorDetail
from .results import ErrorInfo as ErrorInfo
from .results import ToolExecutionResult as ToolExecutionResult
from .results import ToolFailure as ToolFailure
from .results import ToolSuccess as ToolSuccess
from .results import UserMessage as UserMessage
from .results import user_message as user_message
from .slow_stop import SLOW_STOP as SLOW_STOP
from .slow_stop import SlowStop as SlowStop

__all__ = [
    "CHANGE",
    "EXECUTE",
    "MISSING",
    "POST_EXECUTE",
    "PRE_EXECUTE",
    "RESULT",
    "SETTLE",
    "SLOW_STOP",
    "SLOW_STOP_EVENT",
    "TOOL_ABORTED",
    "TOOL_ABORTED_BEFORE_DISPATCH",
    "TOOL_TIMEOUT",
    "Accept",
    "Allow",
    "ApprovalOutcome",
    "ApprovalRequest",
    "Ask",
    "Block",
    "ContentBlock",
    "Deny",
    "Dispatched",
    "ErrorDetail",
    "ErrorInfo",
    "JsonSchemaError",
    "ModelRef",
    "PostToolDecision",
    "PreToolDecision",
    "Prepared",
    "SlowStop",
    "ToolArgsError",
    "ToolCallAborted",
    "ToolDefinition",
    "ToolDispatchExecution",
    "ToolExecution",
    "ToolExecutionInput",
    "ToolExecutionResult",
    "ToolExecutionToken",
    "ToolFailure",
    "ToolGuard",
    "ToolNotFoundError",
    "ToolOutput",
    "ToolOutputError",
    "ToolRunContext",
    "ToolRuntime",
    "ToolSuccess",
    "ToolTimeoutError",
    "ToolsView",
    "UserMessage",
    "define_tool",
    "tool",
    "user_message",
]

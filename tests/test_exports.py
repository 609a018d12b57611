"""The public surface: `tether.__all__` is the curated list a newcomer needs, sorted; every name
of CONTRACT §1–§5 is importable from where the contract says (the top level; `ToolRuntime` also
from `tether.tools`, `Context` from `tether.kernel`, the timeout policy module from
`tether.plugins.timeout_policy`) and from the submodule that holds it; every public module
declares a sorted `__all__` whose names exist."""

import importlib
import pkgutil

import tether

CONTRACT_NAMES = {
    # §1 cancellation
    "AbortController", "AbortError", "AbortSignal", "FusedSignal",
    # §2 timeouts
    "MAX_TIMER_DELAY_MS", "TimeoutReason", "clamp_timeout", "deadline", "Deadline",
    "idle_watchdog", "IdleWatchdog", "timeout_of",
    # §3 kernel
    "Context",
    # §4 tools
    "ToolExecutionInput", "ToolExecutionToken", "ToolExecution", "ToolDispatchExecution",
    "ToolRunContext", "JsonValue", "ContentBlock", "ErrorInfo", "ErrorDetail", "ToolSuccess",
    "ToolFailure", "ToolExecutionResult", "UserMessage", "user_message", "Allow", "Deny", "Ask",
    "Accept", "Block", "MISSING", "PreToolDecision", "PostToolDecision", "TOOL_ABORTED",
    "TOOL_ABORTED_BEFORE_DISPATCH", "TOOL_TIMEOUT", "HarnessError", "ToolOutput",
    "ToolDefinition", "define_tool", "tool", "ToolRuntime", "ApprovalRequest",
}  # fmt: skip

CURATED = [
    "TOOL_ABORTED", "TOOL_ABORTED_BEFORE_DISPATCH", "TOOL_TIMEOUT",
    "AbortController", "AbortError", "AbortSignal", "Agent", "AgentEvent", "Allow", "Ask", "Deny",
    "LlmConfig", "RunResult", "ScriptedModelServer", "TextDelta", "ToolCallFinished",
    "ToolCallRecord", "ToolCallStarted", "ToolExecution", "ToolRunContext", "TurnFinished",
    "TurnOutcome", "run_process", "tool",
]  # fmt: skip
"""docs/library-reference.md lists the same names."""

HOMES = {
    "tether.signals": ["AbortController", "AbortError", "AbortSignal", "FusedSignal"],
    "tether.timeouts": [
        "MAX_TIMER_DELAY_MS", "Deadline", "IdleWatchdog", "TimeoutReason", "clamp_timeout",
        "deadline", "idle_watchdog", "timeout_of",
    ],
    "tether.tools": [
        "MISSING", "TOOL_ABORTED", "TOOL_ABORTED_BEFORE_DISPATCH", "TOOL_TIMEOUT", "Accept",
        "Allow", "ApprovalRequest", "Ask", "Block", "ContentBlock", "Deny", "ErrorDetail",
        "ErrorInfo", "PostToolDecision", "PreToolDecision", "ToolDefinition",
        "ToolDispatchExecution", "ToolExecution", "ToolExecutionInput", "ToolExecutionResult",
        "ToolExecutionToken", "ToolFailure", "ToolOutput", "ToolRunContext", "ToolRuntime",
        "ToolSuccess", "UserMessage", "define_tool", "tool", "user_message",
    ],
    "tether.kernel": ["Context"],
    "tether.core.json": ["JsonValue"],
    "tether.core.errors": ["HarnessError"],
    "tether.agent": [
        "Agent", "AgentEvent", "LlmConfig", "RunResult", "TextDelta", "ToolCallFinished",
        "ToolCallRecord", "ToolCallStarted", "TurnFinished", "TurnOutcome",
    ],
    "tether.testing": ["ScriptedModelServer"],
}  # fmt: skip
"""Where each name lives besides the top level (docs/library-reference.md)."""


def test_every_contract_name_imports_from_where_the_contract_says() -> None:
    from tether import (  # noqa: F401
        MAX_TIMER_DELAY_MS,
        MISSING,
        TOOL_ABORTED,
        TOOL_ABORTED_BEFORE_DISPATCH,
        TOOL_TIMEOUT,
        AbortController,
        AbortError,
        AbortSignal,
        Accept,
        Allow,
        ApprovalRequest,
        Ask,
        Block,
        ContentBlock,
        Context,
        Deadline,
        Deny,
        ErrorDetail,
        ErrorInfo,
        FusedSignal,
        HarnessError,
        IdleWatchdog,
        JsonValue,
        PostToolDecision,
        PreToolDecision,
        TimeoutReason,
        ToolDefinition,
        ToolDispatchExecution,
        ToolExecution,
        ToolExecutionInput,
        ToolExecutionResult,
        ToolExecutionToken,
        ToolFailure,
        ToolOutput,
        ToolRunContext,
        ToolRuntime,
        ToolSuccess,
        UserMessage,
        clamp_timeout,
        deadline,
        define_tool,
        idle_watchdog,
        timeout_of,
        tool,
        user_message,
    )
    from tether.kernel import Context as KernelContext
    from tether.plugins import timeout_policy
    from tether.tools import ToolRuntime as ToolsToolRuntime

    assert (KernelContext, ToolsToolRuntime) == (Context, ToolRuntime)
    assert (timeout_policy.name, list(timeout_policy.inject)) == (
        "tool-call-timeout-policy",
        ["tools"],
    )
    assert timeout_policy.TOOL_TIMEOUT == "TOOL_TIMEOUT"
    assert callable(timeout_policy.apply)


def test_every_contract_name_is_importable_from_the_top_level() -> None:
    missing = sorted(n for n in CONTRACT_NAMES if not hasattr(tether, n))
    assert missing == []


def test_the_top_level_all_is_the_curated_list() -> None:
    assert tether.__all__ == CURATED


def test_every_name_outside_the_curated_list_is_still_importable_from_the_top_level() -> None:
    assert sorted(n for n in dir(tether) if not n.startswith("_") and not hasattr(tether, n)) == []


def test_each_name_lives_in_the_submodule_that_says_what_it_holds() -> None:
    problems = []
    for module_name, names in HOMES.items():
        module = importlib.import_module(module_name)
        for name in names:
            if getattr(module, name, None) is not getattr(tether, name):
                problems.append(f"{module_name}.{name}")
            if name not in getattr(module, "__all__", ()):
                problems.append(f"{module_name}.__all__ lacks {name}")
    assert problems == []


def _isort_order(names: list[str]) -> list[str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions, each a-z."""

    def key(name: str) -> tuple[int, str]:
        if name.isupper():
            return (0, name)
        return (1 if name[:1].isupper() else 2, name)

    return sorted(names, key=key)


def test_top_level_all_is_sorted() -> None:
    assert tether.__all__ == _isort_order(tether.__all__)
    assert all(hasattr(tether, name) for name in tether.__all__)


def _public_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(tether.__path__, "tether."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        names.append(info.name)
    return names


def test_every_public_module_declares_a_sorted_all_of_existing_names() -> None:
    problems = []
    for name in _public_modules():
        module = importlib.import_module(name)
        exported = getattr(module, "__all__", None)
        if exported is None:
            problems.append(f"{name}: no __all__")
            continue
        if list(exported) not in (sorted(exported), _isort_order(list(exported))):
            problems.append(f"{name}: __all__ not sorted")
        problems.extend(f"{name}: {n} missing" for n in exported if not hasattr(module, n))
    assert problems == []

"""The public surface: `tether.__all__` is exact and sorted, and every public module declares a
sorted `__all__` whose names exist."""

import importlib
import pkgutil

import tether

CONTRACT_NAMES = {
    # §1 cancellation
    "AbortController", "AbortError", "AbortSignal",
    # §2 timeouts
    "MAX_TIMER_DELAY_MS", "TimeoutReason", "clamp_timeout", "deadline", "idle_watchdog",
    "timeout_of",
    # §3 kernel
    "Context",
    # §4 tools
    "ToolExecutionInput", "ToolExecutionToken", "ToolExecution", "ToolDispatchExecution",
    "ToolRunContext", "JsonValue", "ContentBlock", "ErrorInfo", "ErrorDetail", "ToolSuccess",
    "ToolFailure", "ToolExecutionResult", "UserMessage", "user_message", "Allow", "Deny", "Ask",
    "Accept", "Block", "TOOL_ABORTED", "TOOL_ABORTED_BEFORE_DISPATCH", "TOOL_TIMEOUT",
    "HarnessError", "ToolOutput", "ToolDefinition", "define_tool", "tool", "ToolRuntime",
    "ApprovalRequest",
}  # fmt: skip


def test_every_contract_name_is_importable_from_the_top_level() -> None:
    missing = sorted(n for n in CONTRACT_NAMES if not hasattr(tether, n))
    assert missing == []


def _isort_order(names: list[str]) -> list[str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions, each a-z."""

    def key(name: str) -> tuple[int, str]:
        if name.isupper():
            return (0, name)
        return (1 if name[:1].isupper() else 2, name)

    return sorted(names, key=key)


def test_top_level_all_is_sorted_and_complete() -> None:
    assert tether.__all__ == _isort_order(tether.__all__)
    assert set(tether.__all__) >= CONTRACT_NAMES
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

"""The static contract, forbidden uses (CONTRACT §4.1). Each line marked `# expect:` must yield
exactly the named error(s), and no other line may yield any: `mypy[code]` for mypy --strict,
`pyright[rule]` for pyright.

Read only by type checkers (tests/test_static_contract.py); never imported or collected.
"""

from __future__ import annotations

from tether import (
    AbortSignal,
    ToolDispatchExecution,
    ToolExecution,
    ToolExecutionInput,
    ToolRunContext,
)


def omit_the_signal() -> ToolExecutionInput:
    return ToolExecutionInput(  # expect: mypy[call-arg] pyright[reportCallIssue]
        call_id="c1", name="echo", arguments={}
    )


def assign_on_the_readonly_view(exec: ToolExecution, signal: AbortSignal) -> None:
    exec.signal = signal  # expect: mypy[misc] pyright[reportAttributeAccessIssue]


def assign_in_a_tool_body(exec: ToolRunContext, signal: AbortSignal) -> None:
    exec.signal = signal  # expect: mypy[misc] pyright[reportAttributeAccessIssue]


def assign_on_the_input(request: ToolExecutionInput, signal: AbortSignal) -> None:
    request.signal = signal  # expect: mypy[misc] pyright[reportAttributeAccessIssue]


def assign_none_in_a_dispatch_listener(exec: ToolDispatchExecution) -> None:
    exec.signal = None  # expect: mypy[assignment] pyright[reportAttributeAccessIssue]


def delete_in_a_dispatch_listener(exec: ToolDispatchExecution) -> None:
    del exec.signal  # expect: pyright[reportAttributeAccessIssue]

"""`ask_to_leave_sandbox` (plugins/approval/escalation.py): its call parameter is `call`; the
keyword of earlier releases, `exec` (a builtin's name), still works with a DeprecationWarning."""

from __future__ import annotations

import warnings
from typing import cast

import pytest

from tether import AbortController, ToolExecution
from tether.kernel import Context
from tether.plugins.approval.escalation import ask_to_leave_sandbox


class _Aborted:
    """A call whose signal has aborted: the question is answered `cancelled` at once."""

    def __init__(self) -> None:
        controller = AbortController()
        controller.abort()
        self.signal = controller.signal


async def test_the_old_exec_keyword_still_asks_with_a_deprecation_warning() -> None:
    call = cast(ToolExecution, _Aborted())
    with pytest.warns(DeprecationWarning, match="the keyword 'exec' is deprecated"):
        outcome = await ask_to_leave_sandbox(Context(), exec=call, reason="write /etc")  # type: ignore[call-arg]
    assert outcome == "cancelled"


async def test_the_call_keyword_asks_without_a_warning() -> None:
    call = cast(ToolExecution, _Aborted())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert await ask_to_leave_sandbox(Context(), call=call, reason="write /etc") == "cancelled"

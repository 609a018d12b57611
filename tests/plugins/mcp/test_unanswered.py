"""What `Unanswered` recognises as the SDK's answer to a cancelled request."""

from __future__ import annotations

from tether.plugins.mcp.unanswered import is_cancel_answer


def test_a_request_cancelled_error_event_is_the_cancel_answer() -> None:
    chunk = (
        b"event: message\r\n"
        b'data: {"jsonrpc":"2.0","id":3,"error":{"code":-32800,"message":"Request cancelled"}}\r\n'
        b"\r\n"
    )
    assert is_cancel_answer(chunk) is True


def test_a_result_mentioning_the_code_is_not_the_cancel_answer() -> None:
    chunk = b'event: message\r\ndata: {"jsonrpc":"2.0","id":3,"result":{"text":"-32800"}}\r\n\r\n'
    assert is_cancel_answer(chunk) is False


def test_another_error_is_not_the_cancel_answer() -> None:
    chunk = b'data: {"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"-32800"}}\r\n\r\n'
    assert is_cancel_answer(chunk) is False

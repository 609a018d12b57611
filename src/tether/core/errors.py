"""The coded-error base and the total rendering of thrown values (spec §1.17, §8 item 9).

Owns: `HarnessError`; `error_message` (any thrown value -> its message; never raises an
`Exception`); `error_code_info` (a `HarnessError` -> its `(name, code)`). Does not own the
concrete errors, which live next to the code that raises them. The package's exceptions as known
now:

    Exception
     ├── HarnessError                 tether.core.errors   .message .code .name (the class name)
     │    ├── ToolNotFoundError       tether.tools         UNKNOWN_TOOL
     │    ├── ToolArgsError           tether.tools         INVALID_ARGS
     │    ├── ToolOutputError         tether.tools         INVALID_TOOL_OUTPUT
     │    ├── ToolTimeoutError        tether.tools         TOOL_TIMEOUT
     │    └── JsonSchemaError         tether.tools         UNSUPPORTED_SCHEMA
     ├── AbortError                   tether.core.signals  an abort; .reason; NOT a HarnessError
     ├── TimeoutReason                tether.core.timeout  a deadline's abort reason; .code; NOT a
     │                                                     HarnessError
     └── TypeError
          └── NotLosslessJson         tether.core.json     .path
"""

from __future__ import annotations

__all__ = ["HarnessError", "error_code_info", "error_message"]

_UNPRINTABLE = "<unprintable thrown value>"


class HarnessError(Exception):
    """An error with a stable machine-readable `code`, e.g. `HarnessError("no such job", "NO_JOB")`.

    `str(err) == err.message`. `name` is the constructing class's name unless a subclass sets a
    class attribute `name = "..."`; a tool result reports it with `code` as `info`. `cause`, when
    given, becomes `__cause__` (as `raise ... from cause` would).
    """

    def __init__(self, message: str, code: str, *, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        if cause is not None:
            self.__cause__ = cause

    @property
    def name(self) -> str:
        """The error's name in results: the class name, unless a subclass overrides `name`."""
        return type(self).__name__


def error_message(thrown: object) -> str:
    """The message of any thrown value; never raises an `Exception`.

    In order: a `message` attribute that is a `str` (every `HarnessError`); for an exception,
    `str(exc)`, except that a `KeyError` with one `str` argument gives that argument unquoted, and
    an empty text gives the class name; for anything else, `str(thrown)`. If reading any of these
    raises, `<unprintable thrown value>`.
    """
    try:
        message = getattr(thrown, "message", None)
        if isinstance(message, str):
            return message
        if not isinstance(thrown, BaseException):
            return str(thrown)
        args = thrown.args
        if type(thrown).__str__ is KeyError.__str__ and len(args) == 1 and isinstance(args[0], str):
            return args[0]  # str(KeyError("x")) is "'x'"
        return str(thrown) or type(thrown).__name__
    except Exception:
        return _UNPRINTABLE


def error_code_info(thrown: object) -> tuple[str, str] | None:
    """`(name, code)` of a `HarnessError` whose name and code are `str`s; otherwise None."""
    try:
        if not isinstance(thrown, HarnessError):
            return None
        name, code = thrown.name, thrown.code
    except Exception:
        return None
    if isinstance(name, str) and isinstance(code, str):
        return (name, code)
    return None

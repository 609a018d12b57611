"""Contract of `tether.core.errors` (spec §1.17, §2.12, §8 item 9).

`HarnessError(message, code, cause=...)` carries `message`, `code` and `name` (the constructing
class's name unless a subclass sets `name`); `str(err) == message`. `error_message(x)` renders any
thrown value and never raises an `Exception`: a `str` `message` attribute wins, a `KeyError`'s
single `str` argument is unquoted, an empty exception text becomes the class name, anything else
is `str(x)`, and inspection that raises gives `<unprintable thrown value>`. `error_code_info(x)` is
`(name, code)` for a `HarnessError` and None otherwise.
"""

from __future__ import annotations

import pytest

from tether.core.errors import HarnessError, error_code_info, error_message


class JobError(HarnessError):
    pass


class RenamedError(HarnessError):
    name = "Renamed"


class RenamedChildError(RenamedError):
    pass


class WithMessage(Exception):
    def __init__(self) -> None:
        super().__init__("args text")
        self.message = "attribute text"


class WithNonStringMessage(Exception):
    message = 42


class CustomStr(Exception):
    def __str__(self) -> str:
        return "custom text"


class CustomStrKeyError(KeyError):
    def __str__(self) -> str:
        return "custom key text"


class Hostile(Exception):
    def __getattribute__(self, name: str) -> object:
        raise RuntimeError("no attributes for you")

    def __str__(self) -> str:
        raise RuntimeError("no text for you")


class HostileStr:
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


class HostileMessage(Exception):
    @property
    def message(self) -> str:
        raise RuntimeError("no message for you")


class HostileName(HarnessError):
    @property
    def name(self) -> str:
        raise RuntimeError("no name for you")


class NonStringCode(HarnessError):
    def __init__(self) -> None:
        super().__init__("bad code", 500)  # type: ignore[arg-type]


class Messenger:
    message = "object message"


class InterruptingStr(Exception):
    def __str__(self) -> str:
        raise KeyboardInterrupt


# --- HarnessError ------------------------------------------------------------------------------


def test_a_harness_error_keeps_its_message_and_code() -> None:
    err = HarnessError("no such job", "NO_JOB")
    assert (err.message, err.code, str(err)) == ("no such job", "NO_JOB", "no such job")


def test_a_harness_error_is_an_exception() -> None:
    assert isinstance(HarnessError("m", "C"), Exception)


def test_the_name_of_a_harness_error_is_its_class_name() -> None:
    assert HarnessError("m", "C").name == "HarnessError"


def test_the_name_of_a_subclass_is_the_subclass_name() -> None:
    assert JobError("m", "C").name == "JobError"


def test_a_subclass_can_set_its_name_as_a_class_attribute() -> None:
    assert RenamedError("m", "C").name == "Renamed"


def test_a_set_name_is_inherited_by_further_subclasses() -> None:
    assert RenamedChildError("m", "C").name == "Renamed"


def test_a_cause_becomes_the_dunder_cause() -> None:
    cause = ValueError("root")
    err = HarnessError("m", "C", cause=cause)
    assert err.__cause__ is cause
    assert err.__suppress_context__ is True


def test_without_a_cause_there_is_no_dunder_cause() -> None:
    assert HarnessError("m", "C").__cause__ is None


# --- error_message -----------------------------------------------------------------------------


def test_the_message_of_a_harness_error_is_its_message() -> None:
    assert error_message(JobError("job 3 is gone", "NO_JOB")) == "job 3 is gone"


def test_a_string_message_attribute_wins_over_the_exception_text() -> None:
    assert error_message(WithMessage()) == "attribute text"


def test_a_message_attribute_that_is_not_a_string_is_ignored() -> None:
    assert error_message(WithNonStringMessage("args text")) == "args text"


def test_an_exception_gives_its_text() -> None:
    assert error_message(ValueError("boom")) == "boom"


def test_an_exception_with_a_custom_str_gives_that_text() -> None:
    assert error_message(CustomStr("ignored")) == "custom text"


def test_a_key_error_gives_its_key_unquoted() -> None:
    assert error_message(KeyError("x")) == "x"


def test_a_key_error_with_a_non_string_key_gives_its_text() -> None:
    assert error_message(KeyError(1)) == "1"


def test_a_key_error_subclass_with_a_custom_str_gives_that_text() -> None:
    assert error_message(CustomStrKeyError("x")) == "custom key text"


def test_an_exception_with_empty_text_gives_its_class_name() -> None:
    assert error_message(TimeoutError()) == "TimeoutError"


def test_a_string_gives_itself() -> None:
    assert error_message("kaboom") == "kaboom"


@pytest.mark.parametrize(
    ("thrown", "text"), [(42, "42"), (None, "None"), ({"code": 500}, "{'code': 500}")]
)
def test_any_other_value_gives_its_str(thrown: object, text: str) -> None:
    assert error_message(thrown) == text


def test_an_object_with_a_string_message_attribute_gives_that_message() -> None:
    assert error_message(Messenger()) == "object message"


def test_an_exception_whose_inspection_raises_is_unprintable() -> None:
    assert error_message(Hostile()) == "<unprintable thrown value>"


def test_a_value_whose_str_raises_is_unprintable() -> None:
    assert error_message(HostileStr()) == "<unprintable thrown value>"


def test_an_exception_whose_message_property_raises_is_unprintable() -> None:
    assert error_message(HostileMessage("text")) == "<unprintable thrown value>"


def test_a_base_exception_raised_while_reading_the_message_propagates() -> None:
    with pytest.raises(KeyboardInterrupt):
        error_message(InterruptingStr())


# --- error_code_info ---------------------------------------------------------------------------


def test_the_code_info_of_a_harness_error_is_its_name_and_code() -> None:
    assert error_code_info(HarnessError("m", "SOME_CODE")) == ("HarnessError", "SOME_CODE")


def test_the_code_info_of_a_subclass_uses_its_name() -> None:
    assert error_code_info(JobError("m", "NO_JOB")) == ("JobError", "NO_JOB")
    assert error_code_info(RenamedError("m", "X")) == ("Renamed", "X")


@pytest.mark.parametrize("thrown", [ValueError("m"), "text", None, WithMessage()])
def test_anything_but_a_harness_error_has_no_code_info(thrown: object) -> None:
    assert error_code_info(thrown) is None


def test_a_harness_error_whose_name_raises_has_no_code_info() -> None:
    assert error_code_info(HostileName("m", "C")) is None


def test_a_harness_error_with_a_non_string_code_has_no_code_info() -> None:
    assert error_code_info(NonStringCode()) is None


def test_a_value_whose_type_check_raises_has_no_code_info() -> None:
    assert error_code_info(Hostile()) is None

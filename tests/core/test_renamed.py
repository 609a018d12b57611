"""`renamed_keywords` (core/renamed.py, issue 38 §8): a renamed parameter's old keyword still
works for a release, with a DeprecationWarning naming the old and the new keyword; the new
keyword and positional calls do not warn; both at once is a TypeError."""

from __future__ import annotations

import warnings

import pytest

from tether.core.renamed import renamed_keywords


@renamed_keywords(exec="call", next="call_next")
def listener(call: str, call_next: str = "base") -> tuple[str, str]:
    return (call, call_next)


def test_the_old_keyword_still_reaches_the_renamed_parameter_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match="is deprecated") as caught:
        result = listener(exec="x", next="n")  # type: ignore[call-arg]
    assert result == ("x", "n")
    assert [str(w.message) for w in caught] == [
        "listener(): the keyword 'exec' is deprecated (it shadows a builtin); pass 'call' instead",
        "listener(): the keyword 'next' is deprecated (it shadows a builtin); pass 'call_next'"
        " instead",
    ]


def test_the_new_keyword_and_positional_calls_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert listener("x") == ("x", "base")
        assert listener(call="x", call_next="n") == ("x", "n")


def test_passing_the_old_and_the_new_keyword_together_is_a_type_error_naming_both() -> None:
    with pytest.raises(TypeError, match="listener\\(\\) got both 'exec' and 'call'; pass 'call'"):
        listener(call="x", exec="y")  # type: ignore[call-arg]


def test_the_warning_points_at_the_caller() -> None:
    with pytest.warns(DeprecationWarning, match="is deprecated") as caught:
        listener(exec="x")  # type: ignore[call-arg]
    assert caught[0].filename == __file__

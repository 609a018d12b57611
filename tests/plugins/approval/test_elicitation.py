"""Forms for elicitation: fields from a schema, SEP-1034 defaults, typed-in values, the service."""

from __future__ import annotations

import pytest

from tether.core.signals import AbortController
from tether.kernel import Context
from tether.plugins.approval import (
    Approval,
    ApprovalAnswer,
    ApprovalQuestion,
    ElicitationQuestion,
    ElicitationReply,
    ElicitField,
)
from tether.plugins.approval.elicitation import form_of, parse_value, with_defaults

FIELDS = (
    ElicitField("guests", "integer", required=True, default=2),
    ElicitField("note", "string", default="window seat"),
    ElicitField("terrace", "boolean"),
)
FORM = ElicitationQuestion(source="test", message="How many?", fields=FIELDS)


def test_fields_come_from_the_schemas_properties_with_enums_as_choices() -> None:
    schema = {
        "type": "object",
        "properties": {
            "size": {"type": "string", "enum": ["s", "m"], "default": "m"},
            "tone": {"type": "string", "oneOf": [{"const": "warm"}, {"const": "cold"}]},
        },
        "required": ["size"],
    }
    assert form_of(schema) == (
        ElicitField("size", "string", required=True, default="m", choices=("s", "m")),
        ElicitField("tone", "string", choices=("warm", "cold")),
    )


def test_defaults_fill_only_the_fields_left_out() -> None:
    assert with_defaults(FIELDS, {"guests": 5}) == {"guests": 5, "note": "window seat"}


@pytest.mark.parametrize(
    ("field", "text", "value"),
    [
        (ElicitField("n", "integer"), "4", 4),
        (ElicitField("n", "number"), "2.5", 2.5),
        (ElicitField("b", "boolean"), "no", False),
        (ElicitField("s", "string", choices=("a", "b")), "b", "b"),
    ],
)
def test_a_typed_in_value_takes_the_fields_type(
    field: ElicitField, text: str, value: object
) -> None:
    assert parse_value(field, text) == value


def test_a_value_outside_the_choices_is_refused_naming_them() -> None:
    with pytest.raises(ValueError, match="s: one of a, b"):
        parse_value(ElicitField("s", "string", choices=("a", "b")), "c")


class _Filler:
    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        return "reject"

    async def elicit(self, question: ElicitationQuestion) -> ElicitationReply:
        return ElicitationReply("accept", {"guests": 3})


async def test_the_service_returns_an_accepted_form_with_defaults_applied() -> None:
    ctx = Context()
    await ctx.plugin(Approval)
    ctx.approval.attach(_Filler())
    reply = await ctx.approval.elicit(FORM, signal=AbortController().signal)
    assert reply == ElicitationReply("accept", {"guests": 3, "note": "window seat"})
    await ctx.dispose()


async def test_a_prompter_without_forms_leaves_the_headless_answer() -> None:
    class Plain:
        async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
            return "reject"

    ctx = Context()
    await ctx.plugin(Approval)
    ctx.approval.attach(Plain())
    reply = await ctx.approval.elicit(FORM, signal=AbortController().signal)
    assert reply == ElicitationReply("decline")
    await ctx.dispose()


async def test_an_aborted_signal_cancels_the_form_without_asking() -> None:
    ctx = Context()
    await ctx.plugin(Approval)
    ctx.approval.attach(_Filler())
    controller = AbortController()
    controller.abort()
    assert await ctx.approval.elicit(FORM, signal=controller.signal) == ElicitationReply("cancel")
    await ctx.dispose()

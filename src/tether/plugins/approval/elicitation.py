"""Elicitation: a question with a form (an MCP server's `elicitation/create`), asked through the
same approval channel as tool approvals.

Owns `ElicitationQuestion` (who asks, the message, the form's fields read from the requested JSON
Schema), `ElicitField`, `ElicitationReply` (`accept` with the content, `decline`, `cancel`),
`form_of` (a requested schema → fields), `with_defaults` (SEP-1034: on accept, a field the user
left out that has a schema `default` is filled with it) and `parse_value` (one typed-in answer →
its JSON value, or a clear error). The asking itself is `Approval.elicit` (service.py); showing the
form is the prompter's (`tether.cli.approval`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ...core.json import JsonValue

__all__ = [
    "ElicitAction",
    "ElicitField",
    "ElicitationQuestion",
    "ElicitationReply",
    "form_of",
    "parse_value",
    "with_defaults",
]

ElicitAction: TypeAlias = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True, slots=True)
class ElicitField:
    """One field of the form. `default` is the schema's (None: it has none)."""

    name: str
    type: str
    title: str | None = None
    description: str | None = None
    required: bool = False
    default: JsonValue | None = None
    choices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ElicitationQuestion:
    """What the user is asked: `source` names the asker (`mcp server "name"`)."""

    source: str
    message: str
    fields: tuple[ElicitField, ...]


@dataclass(frozen=True, slots=True)
class ElicitationReply:
    """The answer: `content` only with `accept`."""

    action: ElicitAction
    content: Mapping[str, JsonValue] | None = None


def form_of(schema: Mapping[str, object]) -> tuple[ElicitField, ...]:
    """The fields of a requested schema (flat `properties` of primitives, as the spec allows)."""
    properties = schema.get("properties")
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    fields: list[ElicitField] = []
    if not isinstance(properties, Mapping):
        return ()
    for name, spec in properties.items():
        if not isinstance(spec, Mapping):
            continue
        kind = spec.get("type")
        enum = spec.get("enum")
        if enum is None and isinstance(spec.get("oneOf"), list):
            enum = [c.get("const") for c in spec["oneOf"] if isinstance(c, Mapping)]
        title, description = spec.get("title"), spec.get("description")
        fields.append(
            ElicitField(
                name=str(name),
                type=kind if isinstance(kind, str) else "string",
                title=title if isinstance(title, str) else None,
                description=description if isinstance(description, str) else None,
                required=name in needed,
                default=spec.get("default"),
                choices=tuple(str(c) for c in enum) if isinstance(enum, list) else (),
            )
        )
    return tuple(fields)


def with_defaults(
    fields: tuple[ElicitField, ...], content: Mapping[str, JsonValue] | None
) -> dict[str, JsonValue]:
    """`content` with every absent field that has a default filled with it (SEP-1034)."""
    out: dict[str, JsonValue] = dict(content or {})
    for field in fields:
        if field.name not in out and field.default is not None:
            out[field.name] = field.default
    return out


def parse_value(field: ElicitField, text: str) -> JsonValue:
    """A typed-in answer as the field's type; raises ValueError saying what is expected."""
    text = text.strip()
    if field.choices and text not in field.choices:
        raise ValueError(f"{field.name}: one of {', '.join(field.choices)}")
    if field.type == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True
        if text.lower() in ("n", "no", "false", "0"):
            return False
        raise ValueError(f"{field.name}: yes or no")
    if field.type == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{field.name}: a whole number") from None
    if field.type == "number":
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{field.name}: a number") from None
    return text

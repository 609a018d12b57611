"""The model-facing parameters of `read`, `write` and `edit`, with the spec's validation texts.

Owns: the pydantic models (descriptions are the model-facing schema) and the checks that run
before a body: blank paths, positive integers, the `limit` ceiling, edit strings. A violation
becomes `INVALID_ARGS` as `invalid arguments: <field>: <text>`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

__all__ = ["EditArgs", "ReadArgs", "WriteArgs", "read_args_model"]

_FORBID = ConfigDict(extra="forbid", defer_build=True)  # built by the first call


def _violation(text: str) -> PydanticCustomError:
    return PydanticCustomError("value_error", text)


def _non_blank(value: str) -> str:
    if not value.strip():
        raise _violation("file_path must be a non-empty string")
    return value


class ReadArgs(BaseModel):
    """`read` arguments; `read_args_model(limit)` derives the mounted variant."""

    model_config = _FORBID

    file_path: str = Field(description="Path to read, resolved by the filesystem backend.")
    offset: int | None = Field(
        default=None,
        description="1-based first line to return. Defaults to 1.",
        json_schema_extra={"minimum": 1},
    )
    limit: int | None = Field(
        default=None,
        description="Maximum number of lines to return. Defaults to 2000.",
        json_schema_extra={"minimum": 1},
    )

    _check_path = field_validator("file_path")(_non_blank)

    @field_validator("offset", "limit")
    @classmethod
    def _positive(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and value < 1:
            raise _violation(f"{info.field_name} must be a positive integer")
        return value


def read_args_model(read_limit: int) -> type[ReadArgs]:
    """`ReadArgs` with the configured default/maximum in the description and the check
    `limit must be less than or equal to <read_limit>`."""

    class MountedReadArgs(ReadArgs):
        limit: int | None = Field(
            default=None,
            description=f"Maximum number of lines to return. Defaults to {read_limit}.",
            json_schema_extra={"minimum": 1, "maximum": read_limit},
        )

        @field_validator("limit")
        @classmethod
        def _ceiling(cls, value: int | None) -> int | None:
            if value is not None and value > read_limit:
                raise _violation(f"limit must be less than or equal to {read_limit}")
            return value

    MountedReadArgs.__name__ = "ReadArgs"
    MountedReadArgs.__qualname__ = f"ReadArgs[{read_limit}]"  # the configured variant, in reprs
    return MountedReadArgs


class WriteArgs(BaseModel):
    """`write` arguments (empty content is allowed)."""

    model_config = _FORBID

    file_path: str = Field(description="Path to write, resolved by the filesystem backend.")
    content: str = Field(description="Full UTF-8 text content to write.")

    _check_path = field_validator("file_path")(_non_blank)


class EditArgs(BaseModel):
    """`edit` arguments, checked in order: path, old_string, old != new."""

    model_config = _FORBID

    file_path: str = Field(description="Path to edit, resolved by the filesystem backend.")
    old_string: str = Field(description="Literal text to replace. Must match exactly.")
    new_string: str = Field(
        description="Literal replacement text. Use an empty string to delete the match."
    )
    replace_all: bool = Field(
        default=False,
        description=(
            "Replace all matches. Defaults to false; when false, old_string must appear exactly"
            " once."
        ),
    )

    _check_path = field_validator("file_path")(_non_blank)

    @field_validator("old_string")
    @classmethod
    def _old_non_empty(cls, value: str) -> str:
        if not value:
            raise _violation("old_string must be a non-empty string")
        return value

    @field_validator("new_string")
    @classmethod
    def _differ(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("old_string") == value:
            raise _violation("old_string and new_string must differ")
        return value

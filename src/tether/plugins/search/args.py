"""The model-facing parameters of `grep` and `glob`, shaped like Claude Code's Grep and Glob.

No timeout parameter: the budget is deployment policy (the tool's `timeout_ms`, enforced by the
tool-call timeout policy), not something the model chooses. Patterns and globs are bounded
(`MAX_PATTERN_CHARS`), paths too (`MAX_PATH_CHARS`): they travel on rg's command line, which the
kernel caps at 128 KiB per argument, and no real search needs more; a longer one is
`INVALID_ARGS` naming the limit.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from .query import OutputMode

__all__ = ["MAX_PATH_CHARS", "MAX_PATTERN_CHARS", "GlobArgs", "GrepArgs", "grep_args_model"]

MAX_PATTERN_CHARS: Final = 10_000
MAX_PATH_CHARS: Final = 4096  # Linux's PATH_MAX


class GrepArgs(BaseModel):
    """`grep` arguments; `grep_args_model(limit)` states the configured default `head_limit`."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # built by the first call

    pattern: str = Field(
        min_length=1,
        max_length=MAX_PATTERN_CHARS,
        description="The regular expression pattern to search for in file contents.",
    )
    path: str | None = Field(
        default=None,
        max_length=MAX_PATH_CHARS,
        description=(
            "File or directory to search in (rg PATH). Defaults to the current working directory."
        ),
    )
    glob: str | None = Field(
        default=None,
        max_length=MAX_PATTERN_CHARS,
        description='Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}") - maps to rg --glob.',
    )
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description=(
            'Output mode: "content" shows matching lines (supports -A/-B/-C context, -n line'
            ' numbers, head_limit), "files_with_matches" shows file paths, newest first'
            ' (supports head_limit), "count" shows match counts (supports head_limit). Defaults'
            ' to "files_with_matches".'
        ),
    )
    before: int | None = Field(
        default=None,
        alias="-B",
        ge=0,
        description=(
            'Number of lines to show before each match (rg -B). Requires output_mode: "content",'
            " ignored otherwise."
        ),
    )
    after: int | None = Field(
        default=None,
        alias="-A",
        ge=0,
        description=(
            'Number of lines to show after each match (rg -A). Requires output_mode: "content",'
            " ignored otherwise."
        ),
    )
    context: int | None = Field(
        default=None,
        alias="-C",
        ge=0,
        description=(
            "Number of lines to show before and after each match (rg -C). Requires output_mode:"
            ' "content", ignored otherwise.'
        ),
    )
    line_numbers: bool | None = Field(
        default=None,
        alias="-n",
        description=(
            'Show line numbers in output (rg -n). Requires output_mode: "content", ignored'
            " otherwise. Defaults to true."
        ),
    )
    ignore_case: bool | None = Field(
        default=None, alias="-i", description="Case insensitive search (rg -i)."
    )
    file_type: str | None = Field(
        default=None,
        alias="type",
        max_length=100,
        description=(
            "File type to search (rg --type). Common types: js, py, rust, go, java, etc. More"
            " efficient than glob for standard file types."
        ),
    )
    head_limit: int | None = Field(
        default=None,
        ge=1,
        description=(
            'Limit output to the first N lines/entries, like "| head -N". Works across all'
            " output modes: content (output lines), files_with_matches (file paths), count"
            " (count entries). Defaults to 250."
        ),
    )
    multiline: bool | None = Field(
        default=None,
        description=(
            "Enable multiline mode where . matches newlines and patterns can span lines"
            " (rg -U --multiline-dotall). Default: false."
        ),
    )


def grep_args_model(default_limit: int) -> type[GrepArgs]:
    """`GrepArgs` whose `head_limit` description names the configured default."""

    class MountedGrepArgs(GrepArgs):
        head_limit: int | None = Field(
            default=None,
            ge=1,
            description=(
                'Limit output to the first N lines/entries, like "| head -N". Works across all'
                " output modes: content (output lines), files_with_matches (file paths), count"
                f" (count entries). Defaults to {default_limit}."
            ),
        )

    MountedGrepArgs.__name__ = "GrepArgs"
    MountedGrepArgs.__qualname__ = f"GrepArgs[{default_limit}]"  # the configured variant, in reprs
    return MountedGrepArgs


class GlobArgs(BaseModel):
    """`glob` arguments."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # built by the first call

    pattern: str = Field(
        min_length=1,
        max_length=MAX_PATTERN_CHARS,
        description=(
            'The glob pattern to match files against, e.g. "**/*.py" or "src/**/*.{ts,tsx}". A'
            " pattern without a slash matches file names at any depth."
        ),
    )
    path: str | None = Field(
        default=None,
        max_length=MAX_PATH_CHARS,
        description=(
            "The directory to search in. Defaults to the current working directory; omit it"
            ' rather than passing "undefined" or "null".'
        ),
    )

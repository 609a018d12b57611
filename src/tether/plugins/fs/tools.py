"""The model-facing `read`, `write` and `edit` tools over `ctx.fs` (spec §6.3). Plugin `tool-fs`.

Owns: the tool definitions, their bodies (resolve against the session cwd, ask the intent
waterfalls, call the seam, report what was observed), the remediation suffixes for write/edit
failures, and the prompt texts. A write or edit the sandbox refuses (FS_SANDBOX_DENIED with an
`escalation`: a protected path, outside the writable roots, read-only mode — in every permission
mode, `--yolo` included) is asked as a `sandbox-escalation` question where a person can answer
(`tether chat`), and made once outside the sandbox only on their yes; elsewhere, or on a no, the
call fails with the refusal and what the model can do. Does not own: I/O and its errors (the `fs`
service), or the read-before-write rule (the observation policy answers the intent waterfalls;
without it writes and edits are unconditional). None of these tools declares `timeout_ms`: file I/O
is stopped by the caller's signal only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Final, Literal, cast

from typing_extensions import TypedDict  # pydantic needs it on Python 3.11

from ...core.errors import HarnessError
from ...core.json import JsonValue
from ...kernel import Context
from ...kernel.model_values import SLOW, ModelValue
from ...tools.definition import ToolDefinition, ToolOutput, define_tool
from ...tools.errors import ToolCallAborted
from ...tools.execution import ToolExecution, ToolRunContext
from ...tools.model_ref import ModelRef
from ...tools.results import ContentBlock
from .errors import (
    FS_ABORTED,
    FS_NOT_FOUND,
    FS_NOT_OBSERVED,
    FS_NOT_REGULAR_FILE,
    FS_STALE_VERSION,
    FsError,
    refuse_read_only,
)
from .seam import EDIT_INTENT, OBSERVED, WRITE_INTENT, FileSystem

if TYPE_CHECKING:
    # resolved where a mapping is validated (tether.kernel.config_models)
    from pydantic import AfterValidator, StrictInt, ValidationInfo

    # the argument models are imported by each tool's first call, not at boot; so are the
    # records, the read window and the renderings, by the first call that needs them (issue 36)
    from .args import EditArgs, ReadArgs, WriteArgs
    from .records import EditGuard, WriteIntent

__all__ = [
    "PROMPTS",
    "EditValue",
    "ReadLine",
    "ReadValue",
    "ToolFsConfig",
    "WriteValue",
    "apply",
    "fast_count",
    "fs_tools",
    "inject",
    "name",
    "positive_count",
    "remediate",
    "session_cwd",
]

name: Final = "tool-fs"
inject: Final = ("tools", "fs")

PROMPTS: Final = (
    (
        "tool:read",
        100,
        "Use the read tool — not shell commands like cat — to inspect text files. Results"
        " include line numbers. Use offset and limit to continue reading large files.",
    ),
    (
        "tool:write",
        101,
        "Use the write tool to create files or completely replace file contents. Existing files"
        " are overwritten, so read an existing file first (the default fs-observation-policy"
        " requires it) and prefer edit for targeted changes.",
    ),
    (
        "tool:edit",
        102,
        "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces"
        " literal old_string with new_string; by default old_string must appear exactly once. If"
        " old_string appears multiple times, provide a more specific old_string or set"
        " replace_all to true. Read the file first (the default fs-observation-policy requires"
        " it), unless you just created or edited it in this session.",
    ),
)
"""(section id, order, text) for a system-prompt assembler."""


def positive_count(value: int, info: ValidationInfo) -> int:
    """The validator of a `read_*` limit (`tool-fs: <key> must be a positive integer`); it runs
    only where pydantic validates a mapping."""
    if value < 1:
        from pydantic_core import PydanticCustomError

        raise PydanticCustomError(
            "value_error", f"tool-fs: {info.field_name} must be a positive integer"
        )
    return value


def fast_count(value: object) -> object:
    """A `read_*` limit taken without pydantic: an `int` ≥ 1 (see tether.kernel.model_values)."""
    return value if type(value) is int and value >= 1 else SLOW


class ToolFsConfig(ModelValue):
    """Limits of `read` (all positive integers). Validated when made, without pydantic when every
    value is plainly valid (`tether.kernel.model_values`)."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models
    __config_fast__: ClassVar = {
        "read_limit": fast_count,
        "read_max_line_length": fast_count,
        "read_max_bytes": fast_count,
        "read_stream_min_size": fast_count,
    }

    read_limit: Annotated[StrictInt, AfterValidator(positive_count)] = 2000
    read_max_line_length: Annotated[StrictInt, AfterValidator(positive_count)] = 2000
    read_max_bytes: Annotated[StrictInt, AfterValidator(positive_count)] = 51200
    read_stream_min_size: Annotated[StrictInt, AfterValidator(positive_count)] = 10 * 1024 * 1024


Config = ToolFsConfig


class ReadLine(TypedDict):
    number: int
    text: str


class ReadValue(TypedDict):
    path: str
    offset: int
    lines: list[ReadLine]
    total_lines: int


class WriteValue(TypedDict):
    path: str
    operation: Literal["create", "update"]
    before: str | None
    after: str


class EditValue(TypedDict):
    path: str
    before: str
    after: str


def session_cwd(agent: object) -> str | None:
    """The calling agent's session cwd (`agent.session.header.cwd`), None without one."""
    header = getattr(getattr(agent, "session", None), "header", None)
    cwd = getattr(header, "cwd", None)
    return cwd if isinstance(cwd, str) and cwd else None


def remediate(error: FsError) -> HarnessError:
    """Write/edit failures the model can fix get a next step; code kept, original chained.
    FS_ABORTED becomes the call's `ABORTED` (the file was not written)."""
    if error.code == FS_ABORTED:
        return ToolCallAborted(cause=error)
    if error.code == FS_STALE_VERSION:
        return FsError(f"{error.message} — re-read the file, then retry", error.code, cause=error)
    if error.code == FS_NOT_OBSERVED:
        return FsError(f"{error.message} — read the file, then retry", error.code, cause=error)
    return error


async def _no_write_intent() -> WriteIntent:
    return None


async def _no_edit_guard() -> EditGuard | None:
    return None


_NOT_LEFT: Final = {
    "rejected": "the user declined to allow it outside the sandbox",
    "unavailable": (
        "nobody can allow it outside the sandbox here; if the task needs it, say so: the user"
        " can make the change, allow it when asked in `tether chat`, or run tether with"
        " --sandbox danger-full-access"
    ),
}


async def _escalate(ctx: Context, exec: ToolExecution, error: FsError) -> None:
    """A write or edit the sandbox refused (`error.escalation` set): return when a person
    allows it once outside the sandbox, else raise the refusal with the answer appended (a
    cancelled question: `ABORTED`). Any other error is re-raised as is."""
    if error.escalation is None:
        raise error
    from ..approval.escalation import ask_to_leave_sandbox  # at the first refusal (issue 36)

    outcome = await ask_to_leave_sandbox(ctx, exec, error.escalation)
    if outcome == "allowed-once":
        return
    if outcome == "cancelled":
        raise ToolCallAborted(cause=error) from error
    raise FsError(f"{error.message} — {_NOT_LEFT[outcome]}", error.code, cause=error) from error


def _argument(args: object, key: str) -> object:
    return args.get(key) if isinstance(args, Mapping) else None


def _render_write(_args: object, value: JsonValue) -> Sequence[ContentBlock]:
    from . import render  # at the first rendering (issue 36)

    return render.write_text(cast(WriteValue, value)["path"], cast(WriteValue, value)["operation"])


def _render_edit(args: object, value: JsonValue) -> Sequence[ContentBlock]:
    from . import render  # at the first rendering (issue 36)

    return render.edit_text(cast(EditValue, value)["path"], _argument(args, "replace_all") is True)


def fs_tools(ctx: Context, fs: FileSystem, config: ToolFsConfig) -> list[ToolDefinition]:
    """The three definitions, bound to `fs` and to `ctx` for the fs events."""
    read_limit = config.read_limit

    async def read(args: ReadArgs, exec: ToolRunContext) -> ReadValue:
        try:
            return await read_window(args, exec)
        except FsError as error:
            if error.code != FS_ABORTED:
                raise
            raise ToolCallAborted(cause=error) from error

    async def read_window(args: ReadArgs, exec: ToolRunContext) -> ReadValue:
        from .records import Absent, Present  # at the first read (issue 36), as the window
        from .window import WindowBuilder

        signal = exec.signal
        target = await fs.resolve(args.file_path, cwd=session_cwd(exec.agent), signal=signal)
        display = target.display_path
        info = await fs.stat(target, signal=signal)
        if info is None:
            ctx.emit(OBSERVED, target, Absent(), exec.agent)
            raise FsError(f'cannot read "{display}": not found', FS_NOT_FOUND)
        if info.type != "file":
            raise FsError(f'cannot read "{display}": not a regular file', FS_NOT_REGULAR_FILE)
        offset = args.offset or 1
        window = WindowBuilder(
            offset, args.limit or read_limit, config.read_max_line_length, config.read_max_bytes
        )
        if info.size is not None and info.size < config.read_stream_min_size:
            window.feed(await fs.read_text(target, signal=signal))
        else:
            async with aclosing(fs.stream_text(target, signal=signal)) as chunks:
                async for chunk in chunks:
                    window.feed(chunk)
        result = window.finish()
        total = result.total_lines
        if not result.truncated_by_bytes and offset > total and not (total == 0 and offset == 1):
            raise FsError(
                f'offset {offset} is out of range for "{display}" ({total} lines)', FS_NOT_FOUND
            )
        ctx.emit(OBSERVED, target, Present(info.version), exec.agent)
        lines = [ReadLine(number=n, text=text) for n, text in result.lines]
        return ReadValue(path=display, offset=offset, lines=lines, total_lines=total)

    def render_read(args: object, value: JsonValue) -> Sequence[ContentBlock]:
        from . import render  # at the first rendering (issue 36), as in each one below

        v = cast(ReadValue, value)
        limit = _argument(args, "limit")
        return render.read_text(
            v["path"],
            v["offset"],
            [(line["number"], line["text"]) for line in v["lines"]],
            v["total_lines"],
            limit if isinstance(limit, int) and limit > 0 else read_limit,
        )

    def read_meta(args: object, value: JsonValue) -> JsonValue:
        from . import render

        v = cast(ReadValue, value)
        meta: dict[str, JsonValue] = {
            "path": v["path"],
            "offset": v["offset"],
            "lines": cast(JsonValue, v["lines"]),
            "total_lines": v["total_lines"],
        }
        lang = render.language_of(v["path"])
        if lang is not None:
            meta["lang"] = lang
        return meta

    async def write(args: WriteArgs, exec: ToolRunContext) -> WriteValue:
        from .records import Present  # at the first write (issue 36)

        signal = exec.signal
        try:
            target = await fs.resolve(args.file_path, cwd=session_cwd(exec.agent), signal=signal)
            refuse_read_only(target.writable, target.display_path, "write")
            intent = await ctx.waterfall(WRITE_INTENT, target, exec.agent, base=_no_write_intent)
            try:
                done = await fs.write_text(target, args.content, intent=intent, signal=signal)
            except FsError as error:
                await _escalate(ctx, exec, error)
                done = await fs.write_text(
                    target, args.content, intent=intent, escalated=True, signal=signal
                )
        except FsError as error:
            fixed = remediate(error)
            if fixed is error:
                raise
            raise fixed from error
        ctx.emit(OBSERVED, target, Present(done.version), exec.agent)
        return WriteValue(
            path=target.display_path, operation=done.operation, before=done.before, after=done.after
        )

    async def edit(args: EditArgs, exec: ToolRunContext) -> EditValue:
        from .records import Present  # at the first edit (issue 36)

        signal = exec.signal
        try:
            target = await fs.resolve(args.file_path, cwd=session_cwd(exec.agent), signal=signal)
            refuse_read_only(target.writable, target.display_path, "edit")
            guard = await ctx.waterfall(EDIT_INTENT, target, exec.agent, base=_no_edit_guard)
            escalated = False
            while True:
                try:
                    done = await fs.edit_text(
                        target,
                        old_string=args.old_string,
                        new_string=args.new_string,
                        replace_all=args.replace_all,
                        guard=guard,
                        escalated=escalated,
                        signal=signal,
                    )
                    break
                except FsError as error:
                    if escalated:
                        raise
                    await _escalate(ctx, exec, error)
                    escalated = True
        except FsError as error:
            fixed = remediate(error)
            if fixed is error:
                raise
            raise fixed from error
        ctx.emit(OBSERVED, target, Present(done.version), exec.agent)
        return EditValue(path=target.display_path, before=done.before, after=done.after)

    def diff_meta(args: object, value: JsonValue) -> JsonValue:
        from . import render

        v = cast(Mapping[str, Any], value)
        return {"diffs": render.diff_hunks(v["path"], v["before"], v["after"])}

    return [
        define_tool(
            name="read",
            description="Read a UTF-8 text file and return line-numbered content.",
            parameters=ModelRef("tether.plugins.fs.args:read_args_model", (read_limit,)),
            output=ToolOutput(schema=ReadValue, render=render_read, presentation_meta=read_meta),
            execute=read,
            is_concurrency_safe=lambda _args: True,
        ),
        define_tool(
            name="write",
            description="Create or fully replace a UTF-8 text file.",
            parameters=ModelRef("tether.plugins.fs.args:WriteArgs"),
            output=ToolOutput(
                schema=WriteValue,
                render=_render_write,
                presentation_meta=diff_meta,
            ),
            execute=write,
        ),
        define_tool(
            name="edit",
            description="Edit an existing UTF-8 text file by replacing literal text.",
            parameters=ModelRef("tether.plugins.fs.args:EditArgs"),
            output=ToolOutput(
                schema=EditValue,
                render=_render_edit,
                presentation_meta=diff_meta,
            ),
            execute=edit,
        ),
    ]


def apply(ctx: Context, config: ToolFsConfig) -> None:
    """Register `read`, `write` and `edit` on `ctx.tools` over `ctx.fs`."""
    fs = cast(FileSystem, ctx.fs)
    for definition in fs_tools(ctx, fs, config):
        ctx.tools.register(definition)

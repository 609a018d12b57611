"""The `grep` and `glob` tools (plugin `search-tools`), built the way the timeout-policy note
anticipates: they forward `exec.signal` to whatever does the work and declare their own
`timeout_ms` (from this plugin's config), so the tool-call timeout policy — not the tool —
enforces the budget and reports `TOOL_TIMEOUT`.

One backend: ripgrep (a verified private copy of the `rg` the locked `ripgrep` package installs,
else `rg` in an absolute PATH entry outside the workspace; the
plugin refuses to mount without one), run through `ctx.shell`, which terminates rg's process
group when the signal aborts. There is no in-process fallback: Python's `re` backtracks and
cannot be interrupted, so a pattern like `(a+)+b` could not be aborted; rg's engine is
linear-time and its process is killable. The shell request's own timeout is only a backstop
(twice the budget) for deployments without the timeout policy (the shell caps it at its own
`max_timeout_ms`). Results: `files_with_matches` and `glob` newest first (mtime, then path),
`count` by path, `content` in path order; every mode capped (`head_limit`, default 250; `glob`:
100) with a notice.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, ClassVar, Final, cast

from typing_extensions import TypedDict  # pydantic needs it on Python 3.11

from ...core.binaries import UntrustedBinary
from ...core.json import JsonValue
from ...core.signals import AbortSignal
from ...core.timeout import MAX_TIMER_DELAY_MS
from ...kernel import Context
from ...kernel.config_models import ConfigValue
from ...tools.definition import ToolDefinition, ToolOutput, define_tool
from ...tools.execution import ToolRunContext
from ...tools.model_ref import ModelRef
from ...tools.results import ContentBlock, text_content
from ..shell.errors import ToolCallAborted
from ..shell.seam import ShellExecutor
from . import ripgrep
from .errors import SEARCH_FAILED, SEARCH_INVALID_ARGS, SEARCH_NOT_FOUND, SearchError

if TYPE_CHECKING:  # resolved where a config is validated (tether.kernel.config_models)
    from pydantic import BeforeValidator, Field, PositiveInt

    from .args import GlobArgs, GrepArgs  # imported by each tool's first call, not at boot

__all__ = [
    "GlobValue",
    "GrepValue",
    "SearchToolsConfig",
    "apply",
    "inject",
    "name",
    "newest_first",
    "search_tools",
]

name: Final = "search-tools"
inject: Final = ("tools", "shell")

GREP_DESCRIPTION: Final = (
    "Search file contents with a regular expression (ripgrep syntax). Respects .gitignore and"
    " skips .git. Use output_mode to get matching file paths (default, newest first), matching"
    " lines with optional context, or per-file counts; filter files with glob or type. Use this"
    " tool instead of running grep or rg through bash."
)
GLOB_DESCRIPTION: Final = (
    'Find files by name with a glob pattern such as "**/*.js" or "src/**/*.ts". Returns'
    " matching file paths sorted by modification time, newest first. Respects .gitignore and"
    " skips .git."
)


def _no_backend(_value: object) -> None:
    from pydantic_core import PydanticCustomError

    raise PydanticCustomError(
        "removed",
        'no longer configurable: grep and glob always run ripgrep (bundled by the "ripgrep"'
        ' package); delete "backend"',
    )


class SearchToolsConfig(ConfigValue):
    """`root`: where relative paths start (default: the cwd at mount); `timeout_ms`: each tool's
    declared budget. `backend` is gone (ripgrep is the only backend); setting it is an error
    that says so."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models

    root: str | None = None
    backend: Annotated[None, BeforeValidator(_no_backend)] = None
    timeout_ms: Annotated[float, Field(gt=0, le=MAX_TIMER_DELAY_MS)] = 60_000
    head_limit: PositiveInt = 250
    glob_limit: PositiveInt = 100
    max_line_length: PositiveInt = 1000
    max_output_bytes: PositiveInt = 16 * 1024 * 1024


Config = SearchToolsConfig


class GrepValue(TypedDict):
    output_mode: str
    path: str
    results: list[str]
    total: int
    matches: int
    incomplete: bool


class GlobValue(TypedDict):
    path: str
    files: list[str]
    total: int
    truncated: bool


def newest_first(paths: Sequence[str], signal: AbortSignal) -> list[str]:
    """Sort by mtime, newest first, then by path (blocking: call from a worker thread)."""
    keyed = []
    for index, path in enumerate(paths):
        if index % 256 == 0 and signal.aborted:
            raise ToolCallAborted()
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            mtime = 0
        keyed.append((-mtime, path))
    keyed.sort()
    return [path for _, path in keyed]


def _session_cwd(agent: object) -> str | None:
    header = getattr(getattr(agent, "session", None), "header", None)
    cwd = getattr(header, "cwd", None)
    return cwd if isinstance(cwd, str) and cwd else None


def _cut(line: str, width: int) -> str:
    return line if len(line) <= width else f"{line[:width]}... (line truncated to {width} chars)"


def search_tools(
    shell: ShellExecutor,
    config: SearchToolsConfig,
    rg: str | Callable[[], str],
    excluded: Callable[[], tuple[str, ...]] = tuple,
) -> list[ToolDefinition]:
    """`grep` and `glob`; `rg` is ripgrep's path, or what finds it at each call (raising
    `SearchError`); `excluded()` the absolute globs never searched (what `Read(...)` deny rules
    deny, asked at each call)."""
    base = os.path.abspath(os.path.expanduser(config.root or os.getcwd()))
    backstop_ms = min(config.timeout_ms * 2, MAX_TIMER_DELAY_MS)

    def locate(path: str | None, agent: object, want_dir: bool) -> tuple[str, str]:
        """(the absolute search root, the directory to run in)."""
        cwd = _session_cwd(agent)
        start = base if cwd is None else os.path.join(base, cwd)
        root = os.path.normpath(os.path.join(start, os.path.expanduser(path or ".")))
        if not os.path.exists(root):
            raise SearchError(f'cannot search "{root}": not found', SEARCH_NOT_FOUND)
        if os.path.isdir(root):
            return root, root
        if want_dir:
            raise SearchError(f'cannot search "{root}": not a directory', SEARCH_INVALID_ARGS)
        return root, os.path.dirname(root)

    async def collect(argv: list[str], workdir: str, signal: AbortSignal) -> tuple[list[str], bool]:
        """ripgrep's output lines (run through the shell), and whether the cap cut some off."""
        out = await ripgrep.run_rg(
            shell,
            [rg if isinstance(rg, str) else rg(), *argv[1:]],
            workdir=workdir,
            timeout_ms=backstop_ms,
            max_output_bytes=config.max_output_bytes,
            signal=signal,
        )
        return out.lines, out.incomplete

    async def grep(args: GrepArgs, exec: ToolRunContext) -> GrepValue:
        from .query import GrepQuery  # at the first search (issue 36)

        signal = exec.signal
        root, workdir = locate(args.path, exec.agent, want_dir=False)
        context = args.context or 0
        query = GrepQuery(
            pattern=args.pattern,
            root=root,
            mode=args.output_mode,
            globs=() if args.glob is None else (args.glob,),
            file_type=args.file_type,
            ignore_case=bool(args.ignore_case),
            line_numbers=args.line_numbers is not False,
            before=args.before if args.before is not None else context,
            after=args.after if args.after is not None else context,
            multiline=bool(args.multiline),
            excluded=ripgrep.relative_exclusions(excluded(), workdir),
        )
        lines, incomplete = await collect(ripgrep.grep_argv(query), workdir, signal)
        if query.mode == "files_with_matches":
            lines = await asyncio.to_thread(newest_first, lines, signal)
        elif query.mode == "count":
            lines.sort()
        limit = args.head_limit or config.head_limit
        matches = 0
        if query.mode == "count":
            matches = sum(int(line.rpartition(":")[2] or 0) for line in lines)
        shown = lines[:limit]
        if query.mode == "content":
            shown = [_cut(line, config.max_line_length) for line in shown]
        return GrepValue(
            output_mode=query.mode,
            path=root,
            results=shown,
            total=len(lines),
            matches=matches,
            incomplete=incomplete,
        )

    def render_grep(_args: object, value: JsonValue) -> Sequence[ContentBlock]:
        from . import render  # at the first result shown (issue 36)

        v = cast(GrepValue, value)
        return text_content(
            render.grep_text(
                v["output_mode"], v["results"], v["total"], v["matches"], v["incomplete"]
            )
        )

    async def glob(args: GlobArgs, exec: ToolRunContext) -> GlobValue:
        from .query import GlobQuery  # at the first search (issue 36)

        signal = exec.signal
        root, workdir = locate(args.path, exec.agent, want_dir=True)
        excluding = ripgrep.relative_exclusions(excluded(), workdir)
        query = GlobQuery(pattern=args.pattern, root=root, excluded=excluding)
        files, _ = await collect(ripgrep.glob_argv(query), workdir, signal)
        files = await asyncio.to_thread(newest_first, files, signal)
        shown = files[: config.glob_limit]
        return GlobValue(
            path=root, files=shown, total=len(files), truncated=len(files) > len(shown)
        )

    def render_glob(_args: object, value: JsonValue) -> Sequence[ContentBlock]:
        from . import render  # at the first result shown (issue 36)

        v = cast(GlobValue, value)
        return text_content(render.glob_text(v["files"], v["truncated"]))

    return [
        define_tool(
            name="grep",
            description=GREP_DESCRIPTION,
            parameters=ModelRef("tether.plugins.search.args:grep_args_model", (config.head_limit,)),
            output=ToolOutput(schema=GrepValue, render=render_grep),
            execute=grep,
            timeout_ms=config.timeout_ms,
            is_concurrency_safe=lambda _args: True,
        ),
        define_tool(
            name="glob",
            description=GLOB_DESCRIPTION,
            parameters=ModelRef("tether.plugins.search.args:GlobArgs"),
            output=ToolOutput(schema=GlobValue, render=render_glob),
            execute=glob,
            timeout_ms=config.timeout_ms,
            is_concurrency_safe=lambda _args: True,
        ),
    ]


def apply(ctx: Context, config: SearchToolsConfig) -> None:
    """Register `grep` and `glob` on `ctx.tools`, running ripgrep through `ctx.shell`."""
    workspace = os.path.abspath(os.path.expanduser(config.root or os.getcwd()))

    def rg() -> str:
        """The verified `rg` (its private copy is made at the first search, not at mount: a
        copy of 26 MB that a session without a search would pay for)."""
        try:
            found = ripgrep.find_rg(outside=(workspace,))
        except UntrustedBinary as exc:
            raise SearchError(f"search unavailable: {exc}", SEARCH_FAILED) from None
        if found is None:
            raise SearchError("search unavailable: ripgrep (rg) is gone", SEARCH_FAILED)
        return found

    if not ripgrep.rg_installed(outside=(workspace,)):
        raise ValueError(
            "search-tools: ripgrep (rg) not found: reinstall tether's dependencies (the"
            ' "ripgrep" package ships rg) or put rg on PATH, outside the workspace'
        )
    shell = cast(ShellExecutor, ctx.shell)

    def excluded() -> tuple[str, ...]:
        """The `permissions` service's `read_exclusions()`, when one is mounted."""
        read_exclusions = getattr(ctx.get("permissions"), "read_exclusions", None)
        found = read_exclusions() if callable(read_exclusions) else ()
        return tuple(g for g in found if isinstance(g, str)) if isinstance(found, tuple) else ()

    for definition in search_tools(shell, config, rg, excluded):
        ctx.tools.register(definition)

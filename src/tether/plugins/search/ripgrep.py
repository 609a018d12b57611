"""ripgrep, the search tools' one backend: finds `rg`, builds its command lines and runs them
through `ctx.shell`.

Owns: finding the binary (a private, verified copy of the `rg` the locked
`ripgrep` wheel installs, else the first `rg` in an absolute PATH entry outside the workspace), the
argument vectors (hidden files searched, `.git` skipped, `.gitignore` honoured even outside a git
repository, no user config), quoting (`exec` + `shlex.join`, so `rg` replaces the shell and is the
process-group leader), and turning a `ShellRunResult` into output lines or a coded error. Does not
own the process: `ctx.shell` spawns it and stops its group when the signal this module forwards
aborts.

Exit codes: 0 matches, 1 none, 2 error (with matches from the readable files, the matches are
kept).
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ...core.binaries import absolute_path_entries, bundled_binary, trusted_binary
from ...core.signals import AbortSignal
from ..sandbox.policy import FULL_ACCESS
from ..shell.errors import ToolCallAborted
from ..shell.seam import ShellExecutor
from .errors import SEARCH_FAILED, SEARCH_INVALID_ARGS, SEARCH_TIMEOUT, SearchError

if TYPE_CHECKING:  # made by the first search (issue 36): the mount only asks whether rg is there
    from .query import GlobQuery, GrepQuery

__all__ = [
    "RgOutput",
    "bundled_rg",
    "find_rg",
    "glob_argv",
    "grep_argv",
    "relative_exclusions",
    "rg_installed",
    "run_rg",
]

_EXE: Final = "rg.exe" if os.name == "nt" else "rg"

_COMMON: Final = ("rg", "--no-config", "--color=never", "--hidden", "--no-require-git")
_SKIP_GIT: Final = "--glob=!.git"
_INVALID: Final = (  # rg's words for a pattern, glob or type it refuses
    "regex parse error",
    "exceeds size limit",
    "error parsing glob",
    "unrecognized file type",
)


def bundled_rg() -> str | None:
    """The private, verified copy of the installed `ripgrep` package's `rg`
    (`core.binaries.trusted_binary`), None when the package is not installed. Raises
    `UntrustedBinary` when its `rg` does not match the wheel's RECORD."""
    return trusted_binary("ripgrep", _EXE)


def rg_installed(*, outside: Sequence[str] = ()) -> bool:
    """Whether there is an `rg` to find (`find_rg`), without copying or hashing anything."""
    if bundled_binary("ripgrep", _EXE) is not None:
        return True
    search = absolute_path_entries(os.environ.get("PATH", os.defpath), outside=outside)
    return bool(search) and shutil.which(_EXE, path=search) is not None


def find_rg(*, outside: Sequence[str] = ()) -> str | None:
    """The `rg` to run: the bundled one (`bundled_rg`), else the first `rg` in an absolute PATH
    entry that is not inside `outside` (the workspace: a command could plant one there); None
    when there is neither."""
    found = bundled_rg()
    if found is not None:
        return found
    search = absolute_path_entries(os.environ.get("PATH", os.defpath), outside=outside)
    return shutil.which(_EXE, path=search) if search else None


def grep_argv(query: GrepQuery) -> list[str]:
    """The `rg` argv for a content search (paths printed absolute: the root is absolute)."""
    argv = [*_COMMON, _SKIP_GIT]
    if query.mode == "files_with_matches":
        argv.append("--files-with-matches")
    elif query.mode == "count":
        argv += ["--count", "--with-filename"]
    else:
        argv += ["--no-heading", "--with-filename", "--sort=path"]  # deterministic order
        argv.append("--line-number" if query.line_numbers else "--no-line-number")
        if query.before:
            argv.append(f"--before-context={query.before}")
        if query.after:
            argv.append(f"--after-context={query.after}")
    if query.ignore_case:
        argv.append("--ignore-case")
    if query.multiline:
        argv += ["--multiline", "--multiline-dotall"]
    argv += [f"--glob={glob}" for glob in query.globs]
    argv += [f"--glob=!{glob}" for glob in query.excluded]  # later globs win: after the model's
    if query.file_type is not None:
        argv.append(f"--type={query.file_type}")
    return [*argv, "--regexp", query.pattern, "--", query.root]


def relative_exclusions(absolute: Sequence[str], workdir: str) -> tuple[str, ...]:
    """Absolute gitignore-style globs as ripgrep reads `--glob` — relative to the directory it
    runs in (`workdir`): `/w/secrets/**` from `/w` is `/secrets/**`; `/w/**/*.pem` from
    `/w/src` is `**/*.pem`. A glob that cannot match under `workdir` is dropped."""
    here = workdir.rstrip("/")
    out: list[str] = []
    for glob in absolute:
        if glob.startswith(here + "/"):
            out.append(glob[len(here) :])
            continue
        special = min((i for i in map(glob.find, "*?[{") if i >= 0), default=len(glob))
        anchor = glob[:special].rpartition("/")[0]
        rest = glob[len(anchor) + 1 :]
        if rest.startswith("**/") and (here == anchor or here.startswith(anchor + "/")):
            out.append(rest)
    return tuple(dict.fromkeys(out))


def glob_argv(query: GlobQuery) -> list[str]:
    """The `rg --files` argv listing files under the root that match the pattern."""
    excluded = [f"--glob=!{glob}" for glob in query.excluded]
    return [*_COMMON, "--files", _SKIP_GIT, f"--glob={query.pattern}", *excluded, "--", query.root]


class RgOutput:
    """Output lines, and whether the capture cap cut the start of the output off."""

    __slots__ = ("incomplete", "lines")

    def __init__(self, lines: list[str], incomplete: bool) -> None:
        self.lines = lines
        self.incomplete = incomplete


async def run_rg(
    shell: ShellExecutor,
    argv: list[str],
    *,
    workdir: str,
    timeout_ms: float,
    max_output_bytes: int,
    signal: AbortSignal,
) -> RgOutput:
    """Run `argv` and return its stdout lines. `signal` is forwarded: when it aborts, the shell
    terminates the process group and this raises `ToolCallAborted` (`ABORTED`).

    Raises SearchError: SEARCH_INVALID_ARGS (regex or type rejected), SEARCH_FAILED (any other
    error exit or a signal death), SEARCH_TIMEOUT (the shell's own backstop `timeout_ms`).
    """
    from ..shell.records import ShellRequest  # the shell's request: at the first search (issue 36)

    request = ShellRequest(
        command=f"exec {shlex.join(argv)}",
        workdir=workdir,
        timeout_ms=timeout_ms,
        stdout_max_bytes=max_output_bytes,
        sandbox=FULL_ACCESS,  # rg only reads; contained, and runs where no sandbox can be had
    )
    result = await shell.run(request, signal=signal)
    if result.aborted:
        raise ToolCallAborted()
    if result.timed_out:
        raise SearchError(f"search timed out after {result.timeout_ms:g}ms", SEARCH_TIMEOUT)
    stdout = result.stdout
    lines = stdout.text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if stdout.truncated and lines:
        lines.pop(0)  # the tail starts inside a line
    if result.exit_code in (0, 1) or (result.exit_code == 2 and lines):
        return RgOutput(lines, stdout.truncated)
    message = result.stderr.text.strip() or (
        f"exit code {result.exit_code}"
        if result.exit_code is not None
        else f"killed by {result.signal_name}"
    )
    if any(problem in message for problem in _INVALID):
        raise SearchError(f"invalid search: {message}", SEARCH_INVALID_ARGS)
    raise SearchError(f"ripgrep failed: {message}", SEARCH_FAILED)

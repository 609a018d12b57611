"""The search tools' coded errors.

    HarnessError
     └── SearchError    SEARCH_NOT_FOUND (no such path), SEARCH_INVALID_ARGS (bad regex, glob
                        or file type), SEARCH_FAILED (ripgrep failed), SEARCH_TIMEOUT (the
                        shell's own backstop fired: the timeout policy was not loaded)

A cancelled search raises the shell's `ToolCallAborted` (`ABORTED`), and a search stopped by the
tool-call timeout policy ends as `TOOL_TIMEOUT` (the policy replaces the result).
"""

from __future__ import annotations

from typing import Final

from ...core.errors import HarnessError

__all__ = [
    "SEARCH_FAILED",
    "SEARCH_INVALID_ARGS",
    "SEARCH_NOT_FOUND",
    "SEARCH_TIMEOUT",
    "SearchError",
]

SEARCH_NOT_FOUND: Final = "SEARCH_NOT_FOUND"
SEARCH_INVALID_ARGS: Final = "SEARCH_INVALID_ARGS"
SEARCH_FAILED: Final = "SEARCH_FAILED"
SEARCH_TIMEOUT: Final = "SEARCH_TIMEOUT"


class SearchError(HarnessError):
    """A search that could not run, e.g. `SearchError('cannot search "/w/x": not found',
    SEARCH_NOT_FOUND)`."""

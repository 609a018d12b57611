"""The shell capability's coded errors.

```
HarnessError
 ├── ShellError              an infrastructure failure: the command could not be run at all
 │    │                      (`SHELL_SPAWN_FAILED`: bad workdir, missing shell)
 │    └── SpawnAbortedError  the signal was already aborted before spawning (`ABORTED`)
```
`ToolCallAborted` (re-exported from `tether.tools`) is what the bash tool raises when its call
was cancelled mid-run: the same record the registry writes for a superseded success.
A nonzero exit, a timeout kill and an abort kill are not errors: `run()` returns them.
"""

from __future__ import annotations

from typing import Final

from ...core.errors import HarnessError, error_message
from ...tools.errors import ToolCallAborted

__all__ = ["SPAWN_FAILED", "ShellError", "SpawnAbortedError", "ToolCallAborted"]

SPAWN_FAILED: Final = "SHELL_SPAWN_FAILED"


class ShellError(HarnessError):
    """The command could not be run (nothing was started), e.g.
    `spawn failed: ENOENT: No such file or directory: '/missing'`."""

    def __init__(self, message: str, code: str = SPAWN_FAILED) -> None:
        super().__init__(message, code)


class SpawnAbortedError(ShellError):
    """`aborted before spawn: <reason>`: the caller's signal had aborted; nothing was started."""

    def __init__(self, reason: object) -> None:
        shown = "aborted" if reason is None else error_message(reason)
        super().__init__(f"aborted before spawn: {shown}", "ABORTED")
        self.reason = reason

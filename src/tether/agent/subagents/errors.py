"""The `task` tool's coded errors (`HarnessError`s the registry turns into tool results).

```
HarnessError
 ├── UnknownSubagentType   UNKNOWN_SUBAGENT_TYPE    `unknown subagent_type "<x>"; ...`
 ├── DelegationTooDeep     SUBAGENT_DEPTH_EXCEEDED  `... delegation depth <n> ... max_depth <m>`
 ├── SubagentFailed        SUBAGENT_FAILED          the child's turn ended without completing
 ├── NoCallingAgent        SUBAGENT_NO_AGENT        `task` called without an agent loop
 └── ChildNotStarted       ABORTED_BEFORE_DISPATCH  (name AbortError) aborted before the child
                                                    made its first model request
```
"""

from __future__ import annotations

from collections.abc import Sequence

from ...core.errors import HarnessError
from ...tools.results import TOOL_ABORTED_BEFORE_DISPATCH

__all__ = [
    "ChildNotStarted",
    "DelegationTooDeep",
    "NoCallingAgent",
    "SubagentFailed",
    "UnknownSubagentType",
]


class UnknownSubagentType(HarnessError):
    def __init__(self, requested: str, known: Sequence[str]) -> None:
        super().__init__(
            f'unknown subagent_type "{requested}"; available types: {", ".join(known)}',
            "UNKNOWN_SUBAGENT_TYPE",
        )


class DelegationTooDeep(HarnessError):
    def __init__(self, depth: int, max_depth: int) -> None:
        super().__init__(
            f"cannot start a subagent: this agent is at delegation depth {depth} and the "
            f"subagents max_depth is {max_depth}; do this work yourself instead of delegating",
            "SUBAGENT_DEPTH_EXCEEDED",
        )


class SubagentFailed(HarnessError):
    """The child's turn ended `error`, `blocked`, `max-steps` or `max-tokens`."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "SUBAGENT_FAILED")


class NoCallingAgent(HarnessError):
    def __init__(self) -> None:
        super().__init__(
            "the task tool runs subagents for an agent loop; this call has no calling agent "
            "(exec.agent) with a session, model and settings",
            "SUBAGENT_NO_AGENT",
        )


class ChildNotStarted(HarnessError):
    """The call was aborted before the child made its first model request: no child tool ran,
    so the registry records it like its own `ABORTED_BEFORE_DISPATCH`."""

    def __init__(self) -> None:
        super().__init__("tool call aborted before dispatch", TOOL_ABORTED_BEFORE_DISPATCH)

    @property
    def name(self) -> str:
        return "AbortError"

"""`--sandbox MODE`, the option `run`, `chat`, `tools call` and `worker` share (no heavy imports:
the commands that use it import only this)."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

import cyclopts

__all__ = ["SandboxOpt"]

SandboxOpt: TypeAlias = Annotated[
    Literal["read-only", "workspace-write", "danger-full-access"] | None,
    cyclopts.Parameter(
        name="--sandbox",
        help="Where commands may write and whether they reach the network: read-only, "
        "workspace-write (the default: the workspace, a private /tmp, no network) or "
        "danger-full-access (no sandbox). Every command stays contained; --yolo never "
        "changes this. See docs/sandbox.md.",
    ),
]

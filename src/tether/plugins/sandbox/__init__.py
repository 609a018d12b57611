"""Containment and the OS sandbox for every process tether starts (bubblewrap on Linux).

    policy.py     `SandboxMode`, `SandboxPolicy`, `SandboxSettings` (what a sandbox allows)
    protected.py  the protected set: what stays read-only inside writable roots (all of .git, ...)
    gitconfig.py  what git's configuration includes, uses as hooks or runs (parsed, never run)
    launchers.py  the files configured MCP servers and Claude Code hooks run from
    placeholders.py  the empty directories that pin missing protected paths while a command runs
    boundary.py   may the model write this path under this policy (the file tools' check)
    bounds.py     `Bounds`: tmpfs sizes and the process bound of a sandboxed command
    cgroups.py    a `pids` cgroup per sandboxed command, where one can be made
    seccomp.py    the BPF filter against what namespaces do not cover (AF_UNIX, io_uring, ...)
    bwrap.py      finding `bwrap`; the one function from a `Layout` to bwrap's arguments
    probe.py      what this kernel supports (probed once per process)
    plan.py       `confine()`: one command's `Jail` (argv, filter descriptor, root locks)
    denials.py    recognizing a command that failed because of the sandbox
    environment.py  `EnvPolicy`: which of tether's environment variables commands inherit

Used by the shell (bash, jobs, hooks, the process API of custom tools), the MCP client and the
file tools (`boundary.py`); the modes and their guarantees are described in docs/sandbox.md.
"""

from __future__ import annotations

from ...core.lazy import lazy_names

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: keeps this module free of imports
if TYPE_CHECKING:
    from .bounds import Bounds as Bounds
    from .denials import sandbox_denial as sandbox_denial
    from .environment import EnvPolicy as EnvPolicy
    from .plan import SANDBOX_UNAVAILABLE as SANDBOX_UNAVAILABLE
    from .plan import Jail as Jail
    from .plan import SandboxUnavailable as SandboxUnavailable
    from .plan import confine as confine
    from .policy import FULL_ACCESS as FULL_ACCESS
    from .policy import SandboxMode as SandboxMode
    from .policy import SandboxPolicy as SandboxPolicy
    from .policy import SandboxSettings as SandboxSettings
    from .probe import KernelSupport as KernelSupport
    from .probe import kernel_support as kernel_support

_SOURCES: dict[str, str] = {
    "Bounds": ".bounds",
    "sandbox_denial": ".denials",
    "EnvPolicy": ".environment",
    "SANDBOX_UNAVAILABLE": ".plan",
    "Jail": ".plan",
    "SandboxUnavailable": ".plan",
    "confine": ".plan",
    "FULL_ACCESS": ".policy",
    "SandboxMode": ".policy",
    "SandboxPolicy": ".policy",
    "SandboxSettings": ".policy",
    "KernelSupport": ".probe",
    "kernel_support": ".probe",
}
"""Public name → the submodule that defines it: each is imported when first asked for (issue 36: a
boot that reads `SandboxSettings` does not import the jail, the probe or bwrap)."""


__getattr__, __dir__ = lazy_names(globals(), _SOURCES)

__all__ = [
    "FULL_ACCESS",
    "SANDBOX_UNAVAILABLE",
    "Bounds",
    "EnvPolicy",
    "Jail",
    "KernelSupport",
    "SandboxMode",
    "SandboxPolicy",
    "SandboxSettings",
    "SandboxUnavailable",
    "confine",
    "kernel_support",
    "sandbox_denial",
]

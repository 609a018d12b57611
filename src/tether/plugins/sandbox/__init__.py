"""Containment and the OS sandbox for every process tether starts (bubblewrap on Linux).

    policy.py     `SandboxMode`, `SandboxPolicy`, `SandboxSettings` (what a sandbox allows)
    protected.py  the policy files that stay read-only inside writable roots; placeholders
    boundary.py   may the model write this path under this policy (the file tools' check)
    seccomp.py    the BPF filter against what namespaces do not cover (AF_UNIX, io_uring, ...)
    bwrap.py      finding `bwrap`; the one function from a `Layout` to bwrap's arguments
    probe.py      what this kernel supports (probed once per process)
    plan.py       `confine()`: one command's `Jail` (argv, filter descriptor, root locks)
    denials.py    recognizing a command that failed because of the sandbox

Used by the shell (bash, jobs, hooks, the process API of custom tools), the MCP client and the
file tools (`boundary.py`); the modes and their guarantees are described in docs/sandbox.md.
"""

from .denials import sandbox_denial as sandbox_denial
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

__all__ = [
    "FULL_ACCESS",
    "SANDBOX_UNAVAILABLE",
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

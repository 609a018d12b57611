"""What a sandbox allows: the three modes, a policy value, and how config and flags spell them.

Owns `SandboxMode` (`read-only | workspace-write | danger-full-access`), `SandboxPolicy` (a mode,
the extra `writable_roots` and `network_access`) and `SandboxSettings` (the same as a checked value
for `tether.yml`'s `sandbox:` and the shell plugin's config, where a bare mode string is
accepted too, with the environment policy of the shell's processes, `env`). Does not own how a
policy is enforced (`bwrap.py`, `plan.py`), what is protected (`protected.py`) or which variables
pass (`environment.py`).

    read-only           nothing outside the process may change: the whole filesystem is
                        read-only, /tmp is a private tmpfs, there is no network
    workspace-write     (the default) read-only except the workspace, a private /tmp and the
                        configured `writable_roots`; policy files inside them stay read-only;
                        no network unless `network_access`
    danger-full-access  no sandbox: the user's own filesystem, network and privileges.
                        Containment (a PID namespace that dies with tether) still applies
"""

from __future__ import annotations

import enum
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, ClassVar, Final

from ...kernel.model_values import SLOW, ModelValue, exactly, strings
from .bounds import DEFAULT_BOUNDS, DEFAULT_MAX_PROCESSES, DEFAULT_TMP_SIZE, Bounds, parse_size
from .environment import DEFAULT_ENV_POLICY, EnvPolicy

if TYPE_CHECKING:  # resolved where a mapping is validated (tether.kernel.config_models)
    from pydantic import AfterValidator

__all__ = ["FULL_ACCESS", "MODES", "SandboxMode", "SandboxPolicy", "SandboxSettings", "parse_mode"]


class SandboxMode(enum.Enum):
    """How much a command may touch outside its own processes (see the module note)."""

    READ_ONLY = "read-only"
    WORKSPACE_WRITE = "workspace-write"
    DANGER_FULL_ACCESS = "danger-full-access"

    @property
    def sandboxed(self) -> bool:
        """Whether the filesystem and network are restricted (everything but full access)."""
        return self is not SandboxMode.DANGER_FULL_ACCESS


MODES: Final = tuple(mode.value for mode in SandboxMode)
"""The modes as spelled on the command line and in config files."""


def parse_mode(value: str | SandboxMode) -> SandboxMode:
    """The mode `value` names. Raises `ValueError` naming the accepted spellings."""
    if isinstance(value, SandboxMode):
        return value
    try:
        return SandboxMode(value)
    except ValueError:
        raise ValueError(f"unknown sandbox mode {value!r}: use one of {', '.join(MODES)}") from None


@dataclass(frozen=True, kw_only=True, slots=True)
class SandboxPolicy:
    """A sandbox for one command. `writable_roots` (absolute paths) are writable besides the
    workspace in `workspace-write`; `network_access` keeps the network in the sandboxed modes
    (full access always has it); `bounds` are what a sandboxed command may take (`bounds.py`;
    full access has none)."""

    mode: SandboxMode = SandboxMode.WORKSPACE_WRITE
    writable_roots: tuple[str, ...] = ()
    network_access: bool = False
    bounds: Bounds = DEFAULT_BOUNDS

    @classmethod
    def of(cls, value: SandboxPolicy | SandboxMode | str) -> SandboxPolicy:
        """A policy from a policy, a mode or a mode's name (other fields at their defaults)."""
        if isinstance(value, SandboxPolicy):
            return value
        return cls(mode=parse_mode(value))

    @property
    def sandboxed(self) -> bool:
        return self.mode.sandboxed

    @property
    def network(self) -> bool:
        """Whether the command reaches the network."""
        return self.network_access or not self.mode.sandboxed

    def describe(self) -> str:
        """`workspace-write`, with `+network` when a sandboxed mode keeps the network."""
        extra = "+network" if self.network_access and self.mode.sandboxed else ""
        return self.mode.value + extra


FULL_ACCESS: Final = SandboxPolicy(mode=SandboxMode.DANGER_FULL_ACCESS)


def _known_mode(value: str) -> str:
    return parse_mode(value).value


def _non_empty(roots: Sequence[str]) -> tuple[str, ...]:
    for root in roots:
        if not root.strip():
            raise ValueError("writable_roots: an entry is empty; give a directory path")
    return tuple(roots)


def _size(value: int | str) -> int:
    size = parse_size(value)
    Bounds(tmp_size=size)  # raises naming what is wrong
    return size


def _processes(value: int | None) -> int | None:
    Bounds(max_processes=value)
    return value


def _fast_mode(value: object) -> object:
    return value if type(value) is str and value in MODES else SLOW


def _fast_roots(value: object) -> object:
    roots = strings(value)
    return roots if roots is not None and all(root.strip() for root in roots) else SLOW


def _fast_size(value: object) -> object:
    if type(value) is not int and type(value) is not str:
        return SLOW
    try:
        return _size(value)
    except ValueError:
        return SLOW


def _fast_processes(value: object) -> object:
    if value is None or (type(value) is int and value >= 1):
        return value
    return SLOW


class SandboxSettings(ModelValue):
    """`sandbox:` in `tether.yml` (or the shell plugin's `sandbox` field): a mode name, or

    ```yaml
    sandbox:
      mode: workspace-write          # read-only | workspace-write | danger-full-access
      writable_roots: [~/.cache/uv]  # relative paths are relative to the workspace
      network_access: false
      env: {include: [DATABASE_URL]} # what commands inherit: `environment.EnvPolicy`
      tmp_size: 1G                   # each of /tmp and /dev/shm (default: 1G or RAM/4)
      max_processes: 1024            # processes and threads at once; null: no bound
    ```

    Validated when made (a bad value raises pydantic's `ValidationError`), without importing
    pydantic when every value is plainly valid (`tether.kernel.model_values`);
    `model_validate` takes a mode (or its name) as a whole sandbox too.
    """

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models
    __config_fast__: ClassVar = {
        "mode": _fast_mode,
        "writable_roots": _fast_roots,
        "network_access": exactly(bool),
        "env": EnvPolicy.fast_check,
        "tmp_size": _fast_size,
        "max_processes": _fast_processes,
    }

    mode: Annotated[str, AfterValidator(_known_mode)] = SandboxMode.WORKSPACE_WRITE.value
    writable_roots: Annotated[tuple[str, ...], AfterValidator(_non_empty)] = ()
    network_access: bool = False
    env: EnvPolicy = DEFAULT_ENV_POLICY
    tmp_size: Annotated[int | str, AfterValidator(_size)] = DEFAULT_TMP_SIZE
    max_processes: Annotated[int | None, AfterValidator(_processes)] = DEFAULT_MAX_PROCESSES

    @classmethod
    def __config_before__(cls, value: object) -> object:
        """A mode, or its name, is the whole sandbox."""
        if isinstance(value, SandboxMode):
            return {"mode": value.value}
        return {"mode": value} if isinstance(value, str) else value

    def policy(self, workspace: str) -> SandboxPolicy:
        """The policy, with `writable_roots` made absolute (`~` expanded; relative to
        `workspace`)."""
        roots = tuple(
            os.path.normpath(os.path.join(workspace, os.path.expanduser(root)))
            for root in self.writable_roots
        )
        return SandboxPolicy(
            mode=SandboxMode(self.mode),
            writable_roots=roots,
            network_access=self.network_access,
            bounds=Bounds(tmp_size=parse_size(self.tmp_size), max_processes=self.max_processes),
        )

"""The `fs` plugin: the local filesystem seam, the read-before-write policy and the file tools.

One entry point for the usual composition; each part is also a plugin of its own
(`LocalFileSystem` provides `ctx.fs`, `observation` is `fs-observation-policy`, `tools` is
`tool-fs`) for deployments that swap one out. Config:

    root: str | None          workspace; relative paths resolve here (default: the cwd at mount)
    confine: bool = True      refuse paths whose real location is outside the workspace
    directories: list[str] = []  directories the user added (`--add-dir`): reached as the
                              workspace is; writes there obey the sandbox, whose writable
                              roots must hold them (see local.py)
    readable: list[str] = []  directories outside it whose files may be read, never written
    sandbox: SandboxSettings | None = None   the policy writes and edits obey (default: the
                              shell's, the sandbox bash runs in; see local.py)
    observation_policy: bool = True   require a read before overwriting or editing a file
    read_limit, read_max_line_length, read_max_bytes, read_stream_min_size   (see tool-fs)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar, Final

from ...kernel import Context
from ...kernel.model_values import ModelValue, exactly
from ..sandbox.policy import SandboxSettings
from . import observation, tools
from .local import LocalFileSystem, LocalFsConfig
from .tools import fast_count, positive_count

if TYPE_CHECKING:  # resolved where a mapping is validated (tether.kernel.config_models)
    from pydantic import AfterValidator, StrictInt

__all__ = ["FsConfig", "apply", "inject", "name"]

name: Final = "fs"
inject: Final = ("tools",)


class FsConfig(ModelValue):
    """The `fs` plugin's config (see the module note). Validated when made, without pydantic
    when every value is plainly valid (`tether.kernel.model_values`); the `read_*` limits give
    `tool-fs: <key> must be a positive integer`, as `tool-fs`'s own config."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models
    __config_fast__: ClassVar = {
        **LocalFsConfig.__config_fast__,  # the seam's fields, passed on to it as they are
        "observation_policy": exactly(bool),
        "read_limit": fast_count,
        "read_max_line_length": fast_count,
        "read_max_bytes": fast_count,
        "read_stream_min_size": fast_count,
    }

    root: str | None = None
    confine: bool = True
    directories: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()
    sandbox: SandboxSettings | None = None
    observation_policy: bool = True
    read_limit: Annotated[StrictInt, AfterValidator(positive_count)] = 2000
    read_max_line_length: Annotated[StrictInt, AfterValidator(positive_count)] = 2000
    read_max_bytes: Annotated[StrictInt, AfterValidator(positive_count)] = 51200
    read_stream_min_size: Annotated[StrictInt, AfterValidator(positive_count)] = 10 * 1024 * 1024


Config = FsConfig


async def apply(ctx: Context, config: FsConfig) -> None:
    """Mount the seam, then the policy (when enabled), then the tools — each owned by this
    plugin and disposed with it, last mounted first. Each is given its config as a value (made
    from this one's, already valid), so none is validated again."""
    await ctx.plugin(
        LocalFileSystem,
        LocalFsConfig(
            root=config.root,
            confine=config.confine,
            directories=config.directories,
            readable=config.readable,
            sandbox=config.sandbox,
        ),
    )
    if config.observation_policy:
        await ctx.plugin(observation)
    await ctx.plugin(
        tools,
        tools.ToolFsConfig(
            read_limit=config.read_limit,
            read_max_line_length=config.read_max_line_length,
            read_max_bytes=config.read_max_bytes,
            read_stream_min_size=config.read_stream_min_size,
        ),
    )

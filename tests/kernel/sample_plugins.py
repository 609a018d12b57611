"""Plugins the kernel config tests resolve by dotted path (`tests.kernel.sample_plugins[:attr]`).

The module itself is a plugin too: it provides the service "sample".
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from tether.kernel import Context, Service

name = "sample"


def apply(ctx: Context) -> None:
    ctx.provide("sample", "the sample module")


class Tools(Service):
    """Stands in for the tool registry: a service named "tools"."""

    name = "tools"


class Web:
    name = "web"

    class Config(BaseModel):
        model_config = ConfigDict(extra="forbid")
        fetch_timeout_ms: int = 30_000
        search_timeout_ms: int = 30_000

    @staticmethod
    def apply(ctx: Context, config: Config) -> None:
        ctx.provide("web", config)


class TimeoutPolicy:
    name = "tool-call-timeout-policy"
    inject = ("tools",)

    @staticmethod
    def apply(ctx: Context) -> None:
        ctx.on("tools/execute", lambda execution, next: next())


class Broken:
    name = "broken"

    @staticmethod
    def apply(ctx: Context) -> None:
        ctx.provide("half-done", object())
        raise RuntimeError("cannot start")


class Nested:
    class Deeper:
        name = "deeper"

        @staticmethod
        def apply(ctx: Context) -> None:
            ctx.provide("deeper", "found")


not_a_plugin = 42

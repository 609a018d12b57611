"""The `jobs` plugin: provides `ctx.jobs` (a `JobRegistry`) and the `job_output`, `job_list`
and `job_kill` tools, and delivers completion notices to owners.

Mount after `ToolRuntime`: `await ctx.plugin(tether.plugins.jobs.plugin)` (entry point `jobs`).
Disposing it unregisters the tools, withdraws `ctx.jobs`, then cancels every live job and awaits
its settlement.
"""

from __future__ import annotations

from typing import Final

from ...kernel import Context
from .config import JobsConfig
from .notices import deliver_notice
from .registry import JobRegistry
from .tools import job_tools

__all__ = ["Config", "apply", "inject", "name"]

name: Final = "jobs"
inject: Final = ("tools",)
Config = JobsConfig


def apply(ctx: Context, config: JobsConfig) -> None:
    """Provide `ctx.jobs` and register the controller tools (all undone on dispose)."""
    registry = JobRegistry(max_jobs_per_owner=config.max_concurrent_jobs_per_owner)
    ctx.effect(registry.aclose)  # recorded first: runs after the tools and the service are gone
    registry.on_job_done(deliver_notice)
    ctx.provide("jobs", registry)
    for definition in job_tools(registry, config):
        ctx.tools.register(definition)

"""The background-jobs capability: the `ctx.jobs` registry and its model-facing controller.

Plugin: `tether.plugins.jobs.plugin` (`jobs`: provides `ctx.jobs` and the `job_output`,
`job_list`, `job_kill` tools). Modules: model.py (vocabulary and errors), registry.py
(`JobRegistry`), tools.py (the three tools), notices.py (completion notices), config.py.
"""

from .config import JobsConfig as JobsConfig
from .model import JobError as JobError
from .model import JobHooks as JobHooks
from .model import JobOutcome as JobOutcome
from .model import JobRead as JobRead
from .model import JobSnapshot as JobSnapshot
from .model import JobStart as JobStart
from .model import JobStatus as JobStatus
from .registry import JobRegistry as JobRegistry

__all__ = [
    "JobError",
    "JobHooks",
    "JobOutcome",
    "JobRead",
    "JobRegistry",
    "JobSnapshot",
    "JobStart",
    "JobStatus",
    "JobsConfig",
]

"""The background-jobs capability: the `ctx.jobs` registry and its model-facing controller.

Plugin: `tether.plugins.jobs.plugin` (`jobs`: provides `ctx.jobs` and the `job_output`,
`job_list`, `job_kill` tools). Modules: model.py (vocabulary and errors), registry.py
(`JobRegistry`), tools.py (the three tools), notices.py (completion notices), config.py.
"""

from __future__ import annotations

from ...core.lazy import lazy_names

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: keeps this module free of imports
if TYPE_CHECKING:
    from .config import JobsConfig as JobsConfig
    from .model import JobError as JobError
    from .model import JobHooks as JobHooks
    from .model import JobOutcome as JobOutcome
    from .model import JobRead as JobRead
    from .model import JobSnapshot as JobSnapshot
    from .model import JobStart as JobStart
    from .model import JobStatus as JobStatus
    from .registry import JobRegistry as JobRegistry

_SOURCES: dict[str, str] = {
    "JobsConfig": ".config",
    "JobError": ".model",
    "JobHooks": ".model",
    "JobOutcome": ".model",
    "JobRead": ".model",
    "JobSnapshot": ".model",
    "JobStart": ".model",
    "JobStatus": ".model",
    "JobRegistry": ".registry",
}
"""Public name → the submodule that defines it: each is imported when first asked for (issue 36)."""


__getattr__, __dir__ = lazy_names(globals(), _SOURCES)

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

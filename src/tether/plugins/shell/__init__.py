"""The shell capability: the `ctx.shell` seam, the local bash executor, the subprocess service
and the `bash` tool.

Plugins: `tether.plugins.shell.plugin` (`shell`, provides `ctx.shell`) and
`tether.plugins.shell.bash` (`bash`, the tool). Modules:

    seam.py          the `ShellExecutor` and `ShellProcess` protocols (names the records too)
    records.py       request/result types: imported by the first command
    local.py         `LocalBashExecutor` (resolve, run, start) and `BackgroundProcess`
    subprocesses.py  `SubprocessService`: spawning, the live-group table, disposal
    processes.py     `run_process`: the contained, sandboxed, abort-aware process API of tools
    _process.py      one process group: settlement, SIGTERM → grace → SIGKILL
    _spec.py         what a process group is asked to run (`SpawnSpec`), its phase and exit
    _bwrap.py        launching a contained command: bwrap's --info-fd / --block-fd handshake
    _spawn.py        starting a child: pipes, Popen in a new session, reaping, stdin
    _group.py        group and process liveness, signalling (exact: pid + start time)
    _tree.py         the process tree from /proc (psutil elsewhere), the command tag
    _descendants.py  which command each descendant of tether belongs to
    _reaper.py       tether as child subreaper (Linux prctl); reaping adopted zombies
    _ledger.py       the orphan ledger: groups and escaped processes a killed tether left
    _collect.py      byte-exact tails and spill files
    _env.py          the child's environment (the sandbox's env policy + the request's)
    render.py        what the model sees of a result
    errors.py        `ShellError`, `SpawnAbortedError`, `ToolCallAborted`
"""

from __future__ import annotations

from ...core.lazy import lazy_names

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: keeps this module free of imports
if TYPE_CHECKING:
    from .config import ShellConfig as ShellConfig
    from .errors import ShellError as ShellError
    from .errors import SpawnAbortedError as SpawnAbortedError
    from .errors import ToolCallAborted as ToolCallAborted
    from .local import BASH_TIMEOUT as BASH_TIMEOUT
    from .local import BackgroundProcess as BackgroundProcess
    from .local import LocalBashExecutor as LocalBashExecutor
    from .processes import PROCESS_TIMEOUT as PROCESS_TIMEOUT
    from .processes import run_process as run_process
    from .records import Collected as Collected
    from .records import ExitStatus as ExitStatus
    from .records import OutputDelta as OutputDelta
    from .records import ProcessStatus as ProcessStatus
    from .records import ResolvedShellRequest as ResolvedShellRequest
    from .records import ShellRequest as ShellRequest
    from .records import ShellRunResult as ShellRunResult
    from .seam import ShellExecutor as ShellExecutor
    from .seam import ShellProcess as ShellProcess
    from .subprocesses import SubprocessService as SubprocessService

_SOURCES: dict[str, str] = {
    "ShellConfig": ".config",
    "ShellError": ".errors",
    "SpawnAbortedError": ".errors",
    "ToolCallAborted": ".errors",
    "BASH_TIMEOUT": ".local",
    "BackgroundProcess": ".local",
    "LocalBashExecutor": ".local",
    "PROCESS_TIMEOUT": ".processes",
    "run_process": ".processes",
    "Collected": ".records",
    "ExitStatus": ".records",
    "OutputDelta": ".records",
    "ProcessStatus": ".records",
    "ResolvedShellRequest": ".records",
    "ShellExecutor": ".seam",
    "ShellProcess": ".seam",
    "ShellRequest": ".records",
    "ShellRunResult": ".records",
    "SubprocessService": ".subprocesses",
}
"""Public name → the submodule that defines it: each is imported when first asked for (issue 36: the
boot imports the seam and the config, not the process machinery)."""


__getattr__, __dir__ = lazy_names(globals(), _SOURCES)

__all__ = [
    "BASH_TIMEOUT",
    "PROCESS_TIMEOUT",
    "BackgroundProcess",
    "Collected",
    "ExitStatus",
    "LocalBashExecutor",
    "OutputDelta",
    "ProcessStatus",
    "ResolvedShellRequest",
    "ShellConfig",
    "ShellError",
    "ShellExecutor",
    "ShellProcess",
    "ShellRequest",
    "ShellRunResult",
    "SpawnAbortedError",
    "SubprocessService",
    "ToolCallAborted",
    "run_process",
]

"""Permission rules in Claude Code's syntax, as a `tools/pre-execute` policy.

Plugin: `tether.plugins.permissions.plugin:Permissions` (`permissions`, provides
`ctx.permissions`). Modules:

    rules.py         parsing `Tool` / `Tool(specifier)` rules and matching one call
    command_line.py  reading a bash command line as shell syntax: its simple commands
    commands.py      the programs a line runs (wrappers, `sh -c` bodies and `eval` seen through)
    paths.py         gitignore-style path specifiers anchored like Claude Code's
    policy.py        precedence (deny > ask > allow > mode) and session-rule suggestions
    call.py          one call being decided (its bash line read once)
    plugin.py        the plugin, its config and the `tools/pre-execute` listener
"""

from ...core.lazy import lazy_names
from .plugin import Permissions as Permissions
from .plugin import PermissionsConfig as PermissionsConfig
from .policy import DEFAULT_READ_ONLY_TOOLS as DEFAULT_READ_ONLY_TOOLS
from .policy import PermissionMode as PermissionMode
from .policy import PermissionPolicy as PermissionPolicy
from .policy import Verdict as Verdict
from .policy import canonical_mode as canonical_mode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .command_line import CommandLine as CommandLine
    from .command_line import SimpleCommand as SimpleCommand
    from .command_line import parse_command_line as parse_command_line
    from .commands import Program as Program
    from .commands import Programs as Programs
    from .commands import programs_of as programs_of
    from .paths import PathPattern as PathPattern
    from .rules import PermissionRule as PermissionRule
    from .rules import parse_rule as parse_rule

_MATCHING: dict[str, str] = {
    "CommandLine": ".command_line",
    "PathPattern": ".paths",
    "PermissionRule": ".rules",
    "Program": ".commands",
    "Programs": ".commands",
    "SimpleCommand": ".command_line",
    "parse_command_line": ".command_line",
    "parse_rule": ".rules",
    "programs_of": ".commands",
}
"""Names of the matching machinery and their modules, imported at their first use (issue 36): a
boot with no rules parses none and reads no command line."""


__getattr__, __dir__ = lazy_names(globals(), _MATCHING)

__all__ = [
    "DEFAULT_READ_ONLY_TOOLS",
    "CommandLine",
    "PathPattern",
    "PermissionMode",
    "PermissionPolicy",
    "PermissionRule",
    "Permissions",
    "PermissionsConfig",
    "Program",
    "Programs",
    "SimpleCommand",
    "Verdict",
    "canonical_mode",
    "parse_command_line",
    "parse_rule",
    "programs_of",
]

"""Permission rules in Claude Code's syntax, as a `tools/pre-execute` policy.

Plugin: `tether.plugins.permissions.plugin:Permissions` (`permissions`, provides
`ctx.permissions`). Modules:

    rules.py     parsing `Tool` / `Tool(specifier)` rules and matching one call
    commands.py  splitting a bash command into the simple commands rules match
    paths.py     gitignore-style path specifiers anchored like Claude Code's
    policy.py    precedence (deny > ask > allow > mode) and session-rule suggestions
    plugin.py    the plugin, its config and the `tools/pre-execute` listener
"""

from .commands import SplitCommand as SplitCommand
from .commands import split_command as split_command
from .paths import PathPattern as PathPattern
from .plugin import Permissions as Permissions
from .plugin import PermissionsConfig as PermissionsConfig
from .policy import DEFAULT_READ_ONLY_TOOLS as DEFAULT_READ_ONLY_TOOLS
from .policy import PermissionMode as PermissionMode
from .policy import PermissionPolicy as PermissionPolicy
from .policy import Verdict as Verdict
from .policy import canonical_mode as canonical_mode
from .rules import PermissionRule as PermissionRule
from .rules import parse_rule as parse_rule

__all__ = [
    "DEFAULT_READ_ONLY_TOOLS",
    "PathPattern",
    "PermissionMode",
    "PermissionPolicy",
    "PermissionRule",
    "Permissions",
    "PermissionsConfig",
    "SplitCommand",
    "Verdict",
    "canonical_mode",
    "parse_rule",
    "split_command",
]

"""Command hooks: the shared hook protocol and the Claude Code bridge (capabilities spec §5).

Plugin: `tether.plugins.hooks.claude_code` (`hooks-claude-code`). Modules:

    matcher.py        which hooks a matcher selects (literal alternation or regex)
    runner.py         running one command hook through `ctx.shell`, with its own timeout
    output.py         decoding exit code, stdout and stderr into a `HookOutput`
    merge.py          merging the outputs of one point (deny/block > ask > allow)
    journal.py        durable `hook/invoked` / `hook/result` events in the agent's session
    precedence.py     combining `tools/pre-execute` decisions (deny > ask > allow)
    names.py          Claude Code tool names and argument names
    settings.py       where Claude Code settings files are, and reading one
    claude_config.py  parsing Claude Code hook configs into `CommandHook`s
    transcript.py     the Claude Code-format transcript hooks read (`transcript_path`)
    tool_response.py  PostToolUse `tool_response` in Claude Code's per-tool shapes
    environment.py    the settings `env` block and `CLAUDE_ENV_FILE`
    callbacks.py      hooks that are callbacks in another process (the Agent SDK's `hooks=`)
    loading.py        the plugin's `Config` and reading its files
    bridge.py         running the hooks at tether's points (`ClaudeCodeBridge`)
    claude_code.py    the bridge plugin (mounts a bridge only when there are hooks)

The names below are imported at their first use (issue 36).
"""

from ...core.lazy import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .claude_config import SUPPORTED_EVENTS as SUPPORTED_EVENTS
    from .claude_config import ClaudeHookSet as ClaudeHookSet
    from .claude_config import CommandHook as CommandHook
    from .claude_config import HookConfigError as HookConfigError
    from .claude_config import HookGroup as HookGroup
    from .claude_config import parse_claude_hooks as parse_claude_hooks
    from .journal import HookJournal as HookJournal
    from .journal import session_of as session_of
    from .matcher import matcher_diagnostic as matcher_diagnostic
    from .matcher import matches as matches
    from .merge import MergedHookOutcome as MergedHookOutcome
    from .merge import merge_hook_outputs as merge_hook_outputs
    from .names import DEFAULT_TOOL_NAMES as DEFAULT_TOOL_NAMES
    from .names import ToolNames as ToolNames
    from .names import claude_tool_input as claude_tool_input
    from .output import HookOutput as HookOutput
    from .output import parse_hook_output as parse_hook_output
    from .precedence import strictest as strictest
    from .runner import DEFAULT_HOOK_TIMEOUT_MS as DEFAULT_HOOK_TIMEOUT_MS
    from .runner import HookRun as HookRun
    from .runner import run_hook as run_hook

_HOMES: dict[str, str] = {
    "ClaudeHookSet": ".claude_config",
    "CommandHook": ".claude_config",
    "DEFAULT_HOOK_TIMEOUT_MS": ".runner",
    "DEFAULT_TOOL_NAMES": ".names",
    "HookConfigError": ".claude_config",
    "HookGroup": ".claude_config",
    "HookJournal": ".journal",
    "HookOutput": ".output",
    "HookRun": ".runner",
    "MergedHookOutcome": ".merge",
    "SUPPORTED_EVENTS": ".claude_config",
    "ToolNames": ".names",
    "claude_tool_input": ".names",
    "matcher_diagnostic": ".matcher",
    "matches": ".matcher",
    "merge_hook_outputs": ".merge",
    "parse_claude_hooks": ".claude_config",
    "parse_hook_output": ".output",
    "run_hook": ".runner",
    "session_of": ".journal",
    "strictest": ".precedence",
}
"""Each public name's module, imported at the name's first use (issue 36): importing one module of
the package (`names`, `settings`) does not import the hook runner and the shell with it."""


__getattr__, __dir__ = lazy_names(globals(), _HOMES)

__all__ = [
    "DEFAULT_HOOK_TIMEOUT_MS",
    "DEFAULT_TOOL_NAMES",
    "SUPPORTED_EVENTS",
    "ClaudeHookSet",
    "CommandHook",
    "HookConfigError",
    "HookGroup",
    "HookJournal",
    "HookOutput",
    "HookRun",
    "MergedHookOutcome",
    "ToolNames",
    "claude_tool_input",
    "matcher_diagnostic",
    "matches",
    "merge_hook_outputs",
    "parse_claude_hooks",
    "parse_hook_output",
    "run_hook",
    "session_of",
    "strictest",
]

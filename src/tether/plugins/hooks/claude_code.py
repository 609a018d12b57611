"""The Claude Code hook bridge, plugin `hooks-claude-code` (spec §5.3): a user's existing Claude
Code command hooks run, unchanged, at tether's interception points.

A `ClaudeCodeBridge` made with another `runner` runs hooks that are not commands the same way
(`callbacks.callback_runner`: the Agent SDK's hook callbacks, whose answers are decoded as a
command hook's JSON output).

Mount: `await ctx.plugin(tether.plugins.hooks.claude_code, {...})` (entry point
`hooks-claude-code`; `inject = ["shell"]`). Config (`Config`):

    config_path              a hooks.json or settings file (or a list); relative to project_dir
    discover (true)          also read .claude/settings.json and .claude/settings.local.json
                             under project_dir, and ~/.claude/settings.json
    project_dir              the project root (default: the process cwd); exported to every
                             hook as CLAUDE_PROJECT_DIR and substituted for ${CLAUDE_PROJECT_DIR}
    plugin_root              substituted for ${CLAUDE_PLUGIN_ROOT}, exported as well
    default_timeout_ms       600000: a hook's timeout when it sets no `timeout` (seconds)
    stderr_summary_max_chars 500: how much stderr a `hook/result` event keeps
    tool_names               Claude Code name → tether tool name (`DEFAULT_TOOL_NAMES`)
    sandbox                  danger-full-access: hooks are the user's own configuration, so
                             they are contained (their own PID namespace, ended with tether)
                             but not sandboxed; a mode or `{mode, writable_roots,
                             network_access}` sandboxes them (docs/sandbox.md)

Files are read once, at mount. A file that exists (or is configured) but cannot be used — not
readable, not JSON, not an object, a `hooks` that is not an object, an invalid regex matcher —
fails the mount with one `ConfigError` line naming the file and the problem
(`tether.plugins.hooks.settings.settings_error`): a hook nobody runs is a policy nobody applies,
so tether does not run without it. Without any hooks the plugin registers nothing.

Points (Claude Code event → tether event):

    PreToolUse        tools/pre-execute      matcher: the Claude Code tool name. Merged deny
                      (exit 2 included) ⇒ Deny(reason or "blocked by PreToolUse hook"), which
                      the model sees as `Error: <reason>`; ask ⇒ Ask(reason), combined with
                      the rest of the waterfall (deny > ask > allow); allow or nothing ⇒ next()
                      (a hook's allow does not pre-approve anything). The `updatedInput` of
                      the last hook that decided allow or ask (Claude Code's names mapped
                      back) becomes the call's arguments before the rest of the chain runs
                      (`next(arguments=...)`): the permission rules, a PermissionRequest hook,
                      the approval question, the guards and the tool's validation
                      (`INVALID_ARGS`, the body never runs) see the changed input.
    PostToolUse       tools/post-execute     successes only. Merged deny ⇒ Block(feedback =
                      reason or "blocked by PostToolUse hook"); additional context rides the
                      decision (prepended to the downstream one's contexts).
    UserPromptSubmit  agent/prompt           deny ⇒ the prompt is rejected (the turn ends
                      `blocked`, no model request); context (JSON additionalContext or plain
                      stdout) is injected after the prompt.
    Stop              agent/turn-stopping    deny ⇒ the turn continues with a user message
                      (reason or "continue: blocked by Stop hook"); `stop_hook_active` is true
                      once a Stop hook has continued this turn.
    SessionStart      agent/session-start    matcher: `startup`, `resume`, `clear` (after
                      `Agent.new_session`) or `compact` (after a compaction); context injected.
    SessionEnd, PreCompact, PostCompact, Notification, PermissionRequest,
    PostToolUseFailure   see `tether.plugins.hooks.lifecycle`.
    SubagentStart     subagent/start         matcher: the subagent type (`general-purpose`,
                      a `.claude/agents` name); payload `agent_id` (the child's session id) and
                      `agent_type`; `additionalContext` joins the child's first request.
    SubagentStop      subagent/end           after a child's turn that was not aborted; payload
                      `agent_id`, `agent_type`, `stop_hook_active: false` and
                      `agent_transcript_path` (the child's transcript); observe only.

A subagent (an agent loop with a `parent`) runs no SessionStart, UserPromptSubmit or Stop hooks
— as in Claude Code, its start and end are SubagentStart and SubagentStop; its tool calls run
PreToolUse and PostToolUse like any other. The session fields of a Subagent* payload are the
parent's.

Every payload has `session_id`, `transcript_path`, `cwd`, `permission_mode` (the `permissions`
service's mode — `default`, `acceptEdits`, `dontAsk`, `bypassPermissions` — or
`bypassPermissions` when nothing polices calls) and `hook_event_name`. `transcript_path` is a
Claude Code-format transcript beside the session (`transcript.py`), brought up to date (appended,
fsynced) before each hook runs. `PostToolUse`'s `tool_response` has Claude Code's per-tool shape
(`tool_response.py`). The settings `env` blocks (`environment.py`) reach every hook and, through
the agent's command environment (`AgentLoop.env`), every bash call; `SessionStart` hooks get
`CLAUDE_ENV_FILE` (`claude-env.sh` beside the session), and what the file exports joins that
environment for the session's later bash calls.

PostToolUse's payload has `duration_ms` (how long the call ran: a `tools/execute` wrapper);
Stop's has `last_assistant_message`; every payload inside a turn has `prompt_id`, a UUID of the
session and turn (the same for every hook of one prompt). An event with hooks that tether does
not run is named once at load in a warning line (`loading.py`).

Hooks of one point run serially in config order, with cwd = the session's cwd, env
CLAUDE_PROJECT_DIR, CLAUDECODE=1, CLAUDE_CODE_ENTRYPOINT=tether, CLAUDE_CODE_SESSION_ID (the
payload's `session_id`), CLAUDE_PID (this process) and CLAUDE_CONFIG_DIR (`~/.claude`), and the
point's signal (a tool call's or the turn's): cancelling it kills the
running hook. Each run is recorded as `hook/invoked` / `hook/result` when the agent has a session
with an open turn. Hook context messages are user messages with source `{"kind": "plugin", "plugin":
"hooks-claude-code"}`. Exit codes other than 0 and 2, timeouts and kills are non-blocking failures,
recorded with decision `error`. What a person should see reaches the screen, not only the log:
through `agent.notify(source, text)` (a `Notice` event the front end shows; without one, a log
warning) go a failure (`exited 1 (non-blocking): <first stderr line>`, `was killed by SIGKILL`,
`timed out after …`), the stderr of a hook that succeeded (its warnings, up to 5 lines), its
`systemMessage`, and an `updatedInput` tether ignores (a PreToolUse hook's without allow or ask,
another event's but PermissionRequest's); `source`
is `<Event> hook <script>` (`PostToolUse hook lint.sh`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ...core.lazy import lazy_names
from .loading import Config, hook_files, load_hook_set, load_settings_env

if TYPE_CHECKING:
    from ...kernel import Context
    from .bridge import HOOK_CONTEXT_SOURCE, ClaudeCodeBridge, PointOutcome

__all__ = [
    "HOOK_CONTEXT_SOURCE",
    "ClaudeCodeBridge",
    "Config",
    "PointOutcome",
    "apply",
    "inject",
    "load_hook_set",
    "name",
]

name: Final = "hooks-claude-code"
inject: Final = ("shell",)


_log = logging.getLogger("tether.plugins.hooks")

_BRIDGE: Final = frozenset({"HOOK_CONTEXT_SOURCE", "ClaudeCodeBridge", "PointOutcome"})
"""Names of `bridge.py`, imported at their first use: a boot without hooks runs none."""


__getattr__, __dir__ = lazy_names(globals(), dict.fromkeys(_BRIDGE, ".bridge"))


def apply(ctx: Context, config: Config) -> None:
    """Load the hook files and listen at the points that have hooks."""
    project_dir = Path(config.project_dir) if config.project_dir else Path.cwd()
    if not hook_files(config, project_dir):
        return  # no file to read: no hooks, no settings env
    hooks = load_hook_set(config, project_dir)
    env = load_settings_env(config, project_dir)
    if not hooks.events() and not env:
        return
    from .bridge import ClaudeCodeBridge  # running hooks: only when some are configured (issue 36)

    bridge = ClaudeCodeBridge(ctx.shell, config, hooks, project_dir, env=env, ctx=ctx)
    bridge.register(ctx)
    _log.debug(
        "hooks-claude-code: loaded %s from %s",
        ", ".join(sorted(hooks.events())),
        ", ".join(hooks.sources) or "nothing",
    )

"""The `permissions` plugin: Claude Code-style permission rules as a `tools/pre-execute` policy,
and `ctx.permissions` for session rules.

Mount: `await ctx.plugin(Permissions, {...})` (entry point `permissions`). Config:

    mode            "default" | "acceptEdits" | "plan" | "dontAsk" | "bypassPermissions"
                    ("yolo" and "bypass" are aliases); unset, a settings file's
                    `permissions.defaultMode` (the first of local, project, user that has one)
                    is the mode, except `bypassPermissions`, which only a flag or this key
                    sets (a cloned repository's settings never switch asking off)
    allow/ask/deny  rules in Claude Code syntax (`tether.plugins.permissions.rules`)
    read_only_tools tools the default mode allows without asking
                    (read, grep, glob, todo_write, job_list, job_output, task)
    read_only_commands
                    allow bash lines that only read (`ls`, `cat`, `git status`, `rg`...: the
                    list in `tether.plugins.permissions.readonly`) without asking; default true
    workspace       the root that `./x` and `/x` in path rules mean (default: the process cwd)
    claude_settings also apply `permissions.allow/ask/deny` from the Claude Code settings files
                    (.claude/settings.json, .claude/settings.local.json under the workspace,
                    ~/.claude/settings.json); default true
    tool_names      Claude Code name → tether tool name (shared default with the hook bridge)

A malformed rule in tether's own config fails the boot (one line naming the list and index). A
Claude Code settings file fails closed: one that cannot be read, or that has a malformed deny or
ask rule, fails the boot in one line naming the file and the problem; a malformed allow rule
there is logged and skipped. Ignored rules (a specifier on
an `mcp__...` rule or on a tool without a grammar) are logged once at load:
`permissions: ignoring rule "<rule>" (<why>)`.

Rules added while it runs: `deny` (`--disallowedTools`), `import_settings` (`--settings`: its
rules and `defaultMode`), `allow` (`--allow`), `allow_for_session` (an approval's "allow for
this session"), `allow_always` ("don't ask again": saved to `.claude/settings.local.json`, so they
hold after a restart), `allow_temporarily` (a custom slash command's `allowed-tools`, removed
when its turn ends).

The listener: a Deny is returned at once (nothing outranks it, so a deny rule beats any other
listener's allow, whatever the order); otherwise it calls `next()` and returns the stricter of
its own decision and the downstream one (deny > ask > allow). Asks are resolved afterwards by the
registry through the `approval` service.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

from ...core.json import JsonValue
from ...kernel import Service
from ...kernel.config_models import ConfigValue, fields_given
from ...tools.decisions import Deny, PreToolDecision
from ...tools.execution import ToolExecution
from ..hooks.names import DEFAULT_TOOL_NAMES, ToolNames
from ..hooks.precedence import strictest
from ..hooks.settings import claude_settings_paths, load_settings, read_settings, settings_error
from .modes import PLAN_TOOL
from .policy import (
    DEFAULT_READ_ONLY_TOOLS,
    MODE_ALIASES,
    PermissionMode,
    PermissionPolicy,
    canonical_mode,
)

if TYPE_CHECKING:
    from pydantic import AfterValidator

    from ...kernel import Context
    from .rules import PermissionRule

__all__ = ["Permissions", "PermissionsConfig"]

_log = logging.getLogger("tether.plugins.permissions")

_PROBE = ToolNames()


def _parsed(text: str, names: ToolNames, workspace: Path) -> PermissionRule:
    """One rule. Raises ValueError."""
    from .rules import parse_rule  # the rule grammar: at the first rule (issue 36)

    return parse_rule(text, names=names, workspace=workspace)


def _check_rules(values: list[str], kind: str) -> list[str]:
    for index, text in enumerate(values):
        try:
            _parsed(text, _PROBE, Path("/"))
        except ValueError as exc:
            raise ValueError(f"{kind}[{index}]: {exc}") from None
    return values


def _mode(value: str) -> str:
    if value not in MODE_ALIASES:
        known = ", ".join(MODE_ALIASES)
        raise ValueError(f'permissions: unknown mode "{value}" (one of: {known})')
    return value


def _allow(value: list[str]) -> list[str]:
    return _check_rules(value, "allow")


def _ask(value: list[str]) -> list[str]:
    return _check_rules(value, "ask")


def _deny(value: list[str]) -> list[str]:
    return _check_rules(value, "deny")


class PermissionsConfig(ConfigValue):
    """See the module note. Its constructor validates as the mapping path does."""

    __pydantic_config__: ClassVar = {"extra": "forbid", "frozen": True}
    __config_validate__: ClassVar = True

    mode: Annotated[str, AfterValidator(_mode)] = "default"
    allow: Annotated[list[str], AfterValidator(_allow)] = []  # noqa: RUF012 (a shared default: never mutated)
    ask: Annotated[list[str], AfterValidator(_ask)] = []  # noqa: RUF012
    deny: Annotated[list[str], AfterValidator(_deny)] = []  # noqa: RUF012
    read_only_tools: list[str] = list(DEFAULT_READ_ONLY_TOOLS)  # noqa: RUF012
    read_only_commands: bool = True
    workspace: str | None = None
    claude_settings: bool = True
    tool_names: dict[str, str] = dict(DEFAULT_TOOL_NAMES)  # noqa: RUF012


class Permissions(Service):
    """`ctx.permissions`: the policy, its mode, and session rules."""

    name: ClassVar[str] = "permissions"
    Config: ClassVar[type[PermissionsConfig]] = PermissionsConfig

    def __init__(self, ctx: Context, config: PermissionsConfig | None = None) -> None:
        super().__init__(ctx, config)
        cfg = PermissionsConfig() if config is None else config
        self._config = cfg
        workspace = Path(cfg.workspace) if cfg.workspace else Path.cwd()
        names = ToolNames(cfg.tool_names)
        lists: dict[str, list[PermissionRule]] = {"allow": [], "ask": [], "deny": []}
        for kind, parsed in lists.items():
            for text in getattr(cfg, kind):
                parsed.append(_parsed(text, names, workspace))
        mode = canonical_mode(cfg.mode)
        settings_mode: str | None = None
        if cfg.claude_settings:
            for path in claude_settings_paths(workspace):
                found = _import_settings(path, lists, names, workspace)
                settings_mode = _preferred_mode(settings_mode, found, path)
        if "mode" not in fields_given(cfg) and settings_mode is not None:
            mode = canonical_mode(settings_mode)
        for rule in (r for rules in lists.values() for r in rules):
            if rule.ignored is not None:
                _log.warning('permissions: ignoring rule "%s" (%s)', rule.text, rule.ignored)
        self.policy = PermissionPolicy(
            allow=lists["allow"],
            ask=lists["ask"],
            deny=lists["deny"],
            mode=mode,
            read_only_tools=cfg.read_only_tools,
            workspace=workspace,
            names=names,
            read_only_commands=cfg.read_only_commands,
        )
        self._session_rules: list[str] = []
        self._saved_rules: list[str] = []
        self._on_plan: Callable[[str], None] | None = None
        self._plan_registered = False
        self._started = False

    async def start(self) -> None:
        self.ctx.on("tools/pre-execute", self._pre_execute)
        self._started = True
        self._register_plan_tool()

    def _register_plan_tool(self) -> None:
        """`exit_plan_mode` is a tool from the first time the mode is `plan` on (`plan`)."""
        if self._plan_registered or not self._started or self.policy.mode != "plan":
            return
        if self.ctx.get("tools") is None:  # no registry: no calls to police, no tool to add
            return
        if self.ctx.tools.get(PLAN_TOOL) is None:
            from .plan import plan_tool  # its argument model is pydantic: only plan mode needs it

            self.ctx.tools.register(plan_tool(self))
        self._plan_registered = True

    async def _pre_execute(
        self, exec: ToolExecution, next: Callable[[], Awaitable[PreToolDecision]]
    ) -> PreToolDecision:
        mine = self.policy.decide(exec.name, exec.arguments)
        if isinstance(mine, Deny):
            return mine
        return strictest(mine, await next())

    # -- the service ---------------------------------------------------------------------------

    @property
    def mode(self) -> PermissionMode:
        return self.policy.mode

    def set_mode(self, mode: str) -> None:
        """Switch the mode (`yolo` / `bypass` are `bypassPermissions`). Raises ValueError."""
        self.policy.mode = canonical_mode(mode)
        self._register_plan_tool()

    @property
    def on_plan(self) -> Callable[[str], None] | None:
        """Where a plan presented in plan mode goes when nobody can accept it (`tether run`:
        it is the run's result); None — the user accepts it (the call asks)."""
        return self._on_plan

    @on_plan.setter
    def on_plan(self, receiver: Callable[[str], None] | None) -> None:
        self._on_plan = receiver
        self.policy.plan_needs_approval = receiver is None

    def deny(self, rule: str) -> None:
        """Add a deny rule until this plugin is disposed (`--disallowedTools`). Raises
        ValueError for a bad rule."""
        self.policy.add_deny(self.policy.parse(rule))

    def import_settings(self, path: Path) -> None:
        """Apply a Claude Code settings file given explicitly (`--settings`): its allow, ask
        and deny rules, and its `permissions.defaultMode` (any mode: the user named the file).
        Raises ConfigError as a discovered file's problems do."""
        lists: dict[str, list[PermissionRule]] = {"allow": [], "ask": [], "deny": []}
        mode = _import_settings(path, lists, self.policy.names, self.policy.workspace)
        for rule in lists["deny"]:
            self.policy.add_deny(rule)
        for rule in lists["allow"]:
            self.policy.add_allow(rule)
        self.policy.add_asks(lists["ask"])
        if mode is not None:
            self.set_mode(mode)

    def decide(self, tool: str, arguments: JsonValue | None) -> PreToolDecision:
        """What the rules and the mode alone say about a call."""
        return self.policy.decide(tool, arguments)

    def withholds(self, tool: str) -> bool:
        """Whether `tool` is kept from the model: a deny rule names it whole (see the policy)."""
        return self.policy.withholds(tool)

    def read_exclusions(self) -> tuple[str, ...]:
        """What `Read(...)` deny rules deny, as absolute globs the search tools leave out."""
        return self.policy.read_exclusions()

    def suggest_rule(self, tool: str, arguments: JsonValue | None) -> str | None:
        """A rule that would allow this call for the rest of the session (see the policy)."""
        return self.policy.suggest_rule(tool, arguments)

    def allow(self, rule: str) -> None:
        """Add an allow rule until this plugin is disposed, as if configured (`tether run
        --allow`); it is not a session rule. Raises ValueError for a bad rule."""
        self.policy.add_allow(self.policy.parse(rule))

    def allow_for_session(self, rule: str) -> None:
        """Add an allow rule until this plugin is disposed. Raises ValueError for a bad rule."""
        self.policy.add_allow(self.policy.parse(rule))
        self._session_rules.append(rule)

    @property
    def session_rules(self) -> tuple[str, ...]:
        """The allow rules added during this session, in order."""
        return tuple(self._session_rules)

    def suggest_lasting_rules(self, tool: str, arguments: JsonValue | None) -> tuple[str, ...]:
        """The rules "don't ask again" would save for this call (see the policy); empty when
        none would allow it."""
        return self.policy.suggest_lasting_rules(tool, arguments)

    @property
    def settings_file(self) -> Path:
        """Where `allow_always` saves: `.claude/settings.local.json` under the workspace."""
        from .saved import LOCAL_SETTINGS  # saving rules: at the first save (issue 36)

        return self.policy.workspace / LOCAL_SETTINGS

    def allow_always(self, rules: Sequence[str]) -> Path:
        """Save `rules` to `permissions.allow` of the workspace's `.claude/settings.local.json`
        (read at every start) and allow them from now on; returns the file. Raises ValueError
        for a bad rule and `SettingsNotSaved` when the file cannot be updated (nothing is
        allowed then)."""
        from .saved import save_allow_rules

        parsed = [self.policy.parse(rule) for rule in rules]
        path = save_allow_rules(self.policy.workspace, rules)
        for rule, text in zip(parsed, rules, strict=True):
            self.policy.add_allow(rule)
            self._saved_rules.append(text)
        return path

    def add_lasting(self, kind: str, rule: str) -> Path:
        """Save an `allow`, `ask` or `deny` rule to the workspace's local settings file and
        apply it from now on (`/permissions add`); returns the file. Raises ValueError for a
        bad rule or kind and `SettingsNotSaved` (nothing is applied then)."""
        if kind not in ("allow", "ask", "deny"):
            raise ValueError(f"a rule is allow, ask or deny, not {kind!r}")
        from .saved import save_rules

        parsed = self.policy.parse(rule)
        path = save_rules(self.policy.workspace, kind, [rule])
        if kind == "allow":
            self.policy.add_allow(parsed)
            self._saved_rules.append(rule)
        elif kind == "ask":
            self.policy.add_asks([parsed])
        else:
            self.policy.add_deny(parsed)
        return path

    def remove_lasting(self, kind: str, rule: str) -> tuple[Path | None, tuple[str, ...]]:
        """Take a rule out of the workspace's local settings file (`/permissions remove`):
        the file (None when the rule is not in it: nothing changes) and where else the rule is
        written — while it is anywhere else (another settings file, the config) it keeps
        applying, so a deny is never dropped by editing one file of several. Raises ValueError
        for a bad kind and `SettingsNotSaved`."""
        if kind not in ("allow", "ask", "deny"):
            raise ValueError(f"a rule is allow, ask or deny, not {kind!r}")
        from .saved import unsave_rule

        workspace = self.policy.workspace
        path = unsave_rule(workspace, kind, rule)
        if path is None:
            return None, ()
        elsewhere = [
            str(other)
            for other in claude_settings_paths(workspace)
            if other.resolve() != path.resolve() and rule in _listed_in(other, kind)
        ]
        if rule in getattr(self._config, kind):
            elsewhere.append("the tether config")
        if not elsewhere:
            self.policy.remove_text(kind, rule)
            if rule in self._saved_rules:
                self._saved_rules.remove(rule)
        return path, tuple(elsewhere)

    @property
    def saved_rules(self) -> tuple[str, ...]:
        """The rules `allow_always` saved during this session, in order."""
        return tuple(self._saved_rules)

    def allow_temporarily(self, rules: Sequence[str]) -> Callable[[], None]:
        """Allow `rules` until the returned remover runs (idempotent). Raises ValueError for a
        bad rule (nothing is added then)."""
        parsed = [self.policy.parse(rule) for rule in rules]
        for rule in parsed:
            self.policy.add_allow(rule)

        def remove() -> None:
            while parsed:
                self.policy.remove_allow(parsed.pop())

        return remove


def _import_settings(
    path: Path, lists: dict[str, list[PermissionRule]], names: ToolNames, workspace: Path
) -> str | None:
    """Add the rules of one Claude Code settings file. Fails closed: a file that exists but
    cannot be read, or a malformed deny/ask rule, raises ConfigError naming the file (tether
    does not run without rules it was given); a malformed allow rule is skipped with a log
    line (allowing less is safe). Returns the file's `permissions.defaultMode` (checked), or
    None."""
    if not path.exists():
        return None
    section = load_settings(path).get("permissions")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise settings_error(path, '"permissions" is not an object')
    mode = section.get("defaultMode")
    if mode is not None and (not isinstance(mode, str) or mode not in MODE_ALIASES):
        known = ", ".join(m for m in MODE_ALIASES if m not in ("yolo", "bypass"))
        raise settings_error(path, f"permissions.defaultMode {mode!r} is not one of: {known}")
    for kind, rules in lists.items():
        entries = section.get(kind)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise settings_error(path, f'"permissions.{kind}" is not a list of rules')
        for index, text in enumerate(entries):
            try:
                rules.append(_parsed(text, names, workspace))
            except ValueError as exc:
                if kind != "allow":
                    raise settings_error(path, f"permissions.{kind}[{index}]: {exc}") from None
                _log.warning(
                    'permissions: skipping permissions.%s[%d] in "%s": %s', kind, index, path, exc
                )
    return mode


def _preferred_mode(current: str | None, found: str | None, path: Path) -> str | None:
    """The settings mode so far, given the next file's (files come project, local, user: local
    outranks project, project outranks user). `bypassPermissions` from a file is ignored with a
    warning: a file in a cloned repository must not switch asking off."""
    if found is not None and canonical_mode(found) == "bypassPermissions":
        _log.warning(
            'permissions: ignoring defaultMode "%s" in "%s" (switch asking off with '
            "--dangerously-skip-permissions or the permissions plugin's mode)",
            found,
            path,
        )
        return current
    if found is None:
        return current
    if current is None or path.name == "settings.local.json":
        return found
    return current


def _listed_in(path: Path, kind: str) -> list[object]:
    """The `permissions.<kind>` list of a settings file ([] when it has none or is unreadable)."""
    try:
        document = read_settings(path) if path.is_file() else None
    except (OSError, ValueError):
        return []
    section = document.get("permissions") if isinstance(document, dict) else None
    listed = section.get(kind) if isinstance(section, dict) else None
    return listed if isinstance(listed, list) else []

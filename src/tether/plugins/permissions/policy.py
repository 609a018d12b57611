"""The permission policy: rules and a mode decide Allow, Ask or Deny for one tool call.

Owns `PermissionPolicy` (pure: no events; the only I/O is reading the file system to resolve
symlinks and expand a bash line's globs) and its `Verdict`. What matching needs — the rule
grammar, reading a bash line, the read-only list, the prefixes — is imported at the first rule
or check (issue 36): a boot with no rules imports none of it. Precedence, first hit wins —
Claude Code's deny > ask > allow:

    1. a deny rule matches                 Deny  `denied by permission rule "<rule>"`
       a bash line reads a path a
       `Read(...)` deny rule names          Deny  `… "<rule>": the command reads "<path>"`
    2. an ask rule matches                 Ask   `permission rule "<rule>" asks before this call`
       a bash line reads a path a `Read`
       ask rule names, or may read one a
       `Read` deny or ask rule names
       without naming it                   Ask   `… asks before this call: <why>`
    3. an allow rule matches (session
       rules included)                     Allow
    4. the mode decides:
         bypassPermissions ("yolo")        Allow
         the tool is read-only             Allow   (read, grep, glob, todo_write, job_list,
                                                    job_output, task — configurable)
         a bash line that only reads       Allow   (`ls`, `cat`, `git status`, `rg`... in the
                                                    workspace: `tether.plugins.permissions
                                                    .readonly`; `read_only_commands`)
         acceptEdits and write/edit, or a
         bash line of common fs commands
         on workspace paths                Allow   (`tether.plugins.permissions.modes`)
         plan and anything else            Deny    (read-only tools only; `exit_plan_mode`
                                                    asks: the user accepts the plan)
         dontAsk                           Deny
         otherwise                         Ask   `permission mode "<mode>" asks before "<tool>"
                                                 runs`

Modes change what the *mode* asks, never what a rule says: `bypassPermissions` skips the mode's
own ask only — an ask rule (step 2) asks in every mode, as a hook's ask does; under `dontAsk`
every ask becomes Deny with the reason `<ask reason> — refused: permission mode "dontAsk" never
asks`. Deny rules hold in every mode.

A bash command is read once per decision (`tether.plugins.permissions.commands`): deny and ask
rules match the whole line, each simple command and each program it runs under its resolved
name, and are assumed to match when part of the line cannot be read (the reason says so) — a
shell or interpreter reading its program from standard input (`echo x | bash`, `python -`) is
such a part; allow rules must cover every simple command as written in a line read completely
with no substitution, and a prefix or wildcard allow rule never covers a redirection that writes
a file (`PermissionRule.covers`). What a line reads is `tether.plugins.permissions.reads`.

Unknown tools (from plugins added later) are not read-only: they ask by default.
`suggest_rule` proposes the narrowest rule that would allow a call the mode asked about —
`Bash(<the exact command>)`, `Edit(./path)` / `Read(./path)`, `WebFetch(domain:<host>)`, or the
bare tool name — for an approval's "allow for this session"; `suggest_lasting_rules` the rules
"don't ask again" saves: for bash the command prefix of each simple command that needs one
(`Bash(npm test:*)`, `tether.plugins.permissions.prefix`), else the same narrow rule — a prefix
rule that would not allow the call as approved (a redirection that writes a file) is never
offered, the exact command is.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, TypeAlias
from urllib.parse import urlsplit

from ...core.json import JsonValue
from ...tools.decisions import Allow, Ask, Deny, PreToolDecision
from ..hooks.names import ToolNames
from .modes import PLAN_TOOL, fs_command, plan_refusal

if TYPE_CHECKING:
    from .call import Call, Reading
    from .command_line import SimpleCommand
    from .rules import PermissionRule

__all__ = [
    "DEFAULT_READ_ONLY_TOOLS",
    "MODE_ALIASES",
    "PermissionMode",
    "PermissionPolicy",
    "Verdict",
    "canonical_mode",
]

PermissionMode: TypeAlias = Literal[
    "default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"
]
MODE_ALIASES: Final[Mapping[str, PermissionMode]] = {
    "default": "default",
    "acceptEdits": "acceptEdits",
    "plan": "plan",
    "dontAsk": "dontAsk",
    "bypassPermissions": "bypassPermissions",
    "yolo": "bypassPermissions",
    "bypass": "bypassPermissions",
}
DEFAULT_READ_ONLY_TOOLS: Final = (
    "read",
    "grep",
    "glob",
    "todo_write",
    "job_list",
    "job_output",
    "task",  # starting a subagent changes nothing itself; each of the child's calls is policed
)
_EDIT_TOOLS: Final = frozenset({"write", "edit"})


def canonical_mode(mode: str) -> PermissionMode:
    """`yolo` and `bypass` are `bypassPermissions`. Raises ValueError for an unknown mode."""
    found = MODE_ALIASES.get(mode)
    if found is None:
        known = ", ".join(f'"{m}"' for m in MODE_ALIASES)
        raise ValueError(f'unknown permission mode "{mode}" (one of {known})')
    return found


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the policy decided and why. `rule` is the deciding rule (None: the mode)."""

    decision: Literal["allow", "ask", "deny"]
    reason: str | None = None
    rule: str | None = None

    def as_decision(self) -> PreToolDecision:
        if self.decision == "deny":
            return Deny(self.reason or "denied by the permission policy")
        if self.decision == "ask":
            return Ask(self.reason)
        return Allow()


def _lookup(table: dict[str, list[PermissionRule]], tool: str) -> list[PermissionRule] | None:
    """The rules for `tool`; for an MCP tool also its server's (`mcp__server`) rules."""
    if not table:
        return None  # no rules (a default boot's tools are offered without the rule grammar)
    from .rules import mcp_server_key

    rules = table.get(tool)
    server = mcp_server_key(tool)
    wide = None if server is None else table.get(server)
    return rules if not wide else [*(rules or ()), *wide]


def _index(rules: Iterable[PermissionRule]) -> dict[str, list[PermissionRule]]:
    table: dict[str, list[PermissionRule]] = {}
    for rule in rules:
        for tool in rule.tools:
            table.setdefault(tool, []).append(rule)
    return table


_ALLOW: Final = Verdict("allow")


class PermissionPolicy:
    """Rules + mode. Rules are parsed once; session allow rules can be added later."""

    def __init__(
        self,
        *,
        allow: Iterable[PermissionRule] = (),
        ask: Iterable[PermissionRule] = (),
        deny: Iterable[PermissionRule] = (),
        mode: PermissionMode = "default",
        read_only_tools: Iterable[str] = DEFAULT_READ_ONLY_TOOLS,
        workspace: Path,
        names: ToolNames | None = None,
        home: Path | None = None,
        read_only_commands: bool = True,
    ) -> None:
        self._allow_rules = list(allow)
        self._allow = _index(self._allow_rules)
        self._ask = _index(ask)
        self._deny = _index(deny)
        self.mode: PermissionMode = mode
        self._read_only = frozenset(read_only_tools)
        self.workspace = workspace
        self.names = ToolNames() if names is None else names
        self._home = home
        self.read_only_commands = read_only_commands
        """Whether bash lines that only read are allowed without asking."""
        self.plan_needs_approval = True
        """Whether presenting the plan (`exit_plan_mode`) asks; false where nobody can accept
        it (`tether run`: the plan is the run's result and the mode stays `plan`)."""

    def parse(self, text: str) -> PermissionRule:
        """Parse a rule against this policy's workspace and names. Raises ValueError."""
        from .rules import parse_rule

        return parse_rule(text, names=self.names, workspace=self.workspace, home=self._home)

    def add_allow(self, rule: PermissionRule) -> None:
        """Allow from now on (a session rule)."""
        self._allow_rules.append(rule)
        for tool in rule.tools:
            self._allow.setdefault(tool, []).append(rule)

    def add_asks(self, rules: Iterable[PermissionRule]) -> None:
        """Ask from now on (a settings file given with `--settings`)."""
        for rule in rules:
            for tool in rule.tools:
                self._ask.setdefault(tool, []).append(rule)

    def add_deny(self, rule: PermissionRule) -> None:
        """Deny from now on (`--disallowedTools`)."""
        for tool in rule.tools:
            self._deny.setdefault(tool, []).append(rule)

    def remove_allow(self, rule: PermissionRule) -> None:
        """Stop allowing what `rule` (an object `add_allow` took) allowed."""
        self._allow_rules = [r for r in self._allow_rules if r is not rule]
        for tool in rule.tools:
            kept = [r for r in self._allow.get(tool, ()) if r is not rule]
            if kept:
                self._allow[tool] = kept
            else:
                self._allow.pop(tool, None)

    def remove_text(self, kind: str, text: str) -> bool:
        """Stop applying every `kind` rule (`allow`, `ask`, `deny`) written `text`; whether
        there was one (`/permissions remove`)."""
        if kind == "allow":
            matching = [r for r in self._allow_rules if r.text == text]
            for rule in matching:
                self.remove_allow(rule)
            return bool(matching)
        table = {"ask": self._ask, "deny": self._deny}[kind]
        found = False
        for tool, rules in list(table.items()):
            kept = [r for r in rules if r.text != text]
            found = found or len(kept) != len(rules)
            if kept:
                table[tool] = kept
            else:
                del table[tool]
        return found

    def listed(self) -> dict[str, tuple[str, ...]]:
        """The rule texts by kind ("allow", "ask", "deny"), each once, in the order added."""
        out: dict[str, tuple[str, ...]] = {}
        for kind, rules in (
            ("allow", self._allow_rules),
            ("ask", [r for rs in self._ask.values() for r in rs]),
            ("deny", [r for rs in self._deny.values() for r in rs]),
        ):
            out[kind] = tuple(dict.fromkeys(r.text for r in rules))
        return out

    def read_exclusions(self) -> tuple[str, ...]:
        """Absolute gitignore-style globs of what `Read(...)` deny rules deny — each path and
        everything under it — for the search tools to leave out (`rg --glob=!…`), as Claude
        Code's Grep and Glob do."""
        from .paths import PathPattern

        out: list[str] = []
        for rule in self._deny.get("read", ()):
            if isinstance(rule.spec, PathPattern):
                out += [rule.spec.glob, rule.spec.glob.rstrip("/") + "/**"]
        return tuple(dict.fromkeys(out))

    def withholds(self, tool: str) -> bool:
        """Whether a deny rule names `tool` whole (no specifier: `Bash`, `Edit`, `mcp__server`),
        so that no call of it can run: the model is not offered it (`tether.agent.offered`).
        A rule with a specifier (`Bash(rm:*)`) keeps the tool."""
        return any(rule.spec is None for rule in _lookup(self._deny, tool) or ())

    # -- evaluation ----------------------------------------------------------------------------

    def decide(self, tool: str, arguments: JsonValue | None) -> PreToolDecision:
        """The call's `tools/pre-execute` decision."""
        return self.verdict(tool, arguments).as_decision()

    def verdict(
        self, tool: str, arguments: JsonValue | None, *, extra_allow: PermissionRule | None = None
    ) -> Verdict:
        """Apply the precedence of the module note."""
        from .call import Call  # what matching needs: at the first check (issue 36)
        from .rules import mcp_server_key

        call = Call.of(tool, arguments)
        deny = self._first(_lookup(self._deny, tool), call, every=False)
        if deny is not None:
            reason = f'denied by permission rule "{deny.text}"{call.assumed(deny)}'
            return Verdict("deny", reason, deny.text)
        reading = self._reading(self._deny.get("read"), call)
        if reading is not None and reading.sure:
            reason = f'denied by permission rule "{reading.rule.text}": {reading.why}'
            return Verdict("deny", reason, reading.rule.text)
        if self.mode == "plan" or tool == PLAN_TOOL:
            planned = self._plan_verdict(tool, arguments)
            if planned is not None:
                return planned
        ask = self._first(_lookup(self._ask, tool), call, every=False)
        if ask is None and reading is None:
            reading = self._reading(self._ask.get("read"), call)
        if ask is None and reading is None:
            allow_rules = list(_lookup(self._allow, tool) or ())
            if extra_allow is not None and (
                tool in extra_allow.tools or mcp_server_key(tool) in extra_allow.tools
            ):
                allow_rules.append(extra_allow)
            allowed = self._allowed(allow_rules, call)
            if allowed is not None:
                return Verdict("allow", None, allowed.text)
            if self.mode == "bypassPermissions" or tool in self._read_only:
                return _ALLOW
            if tool == "bash" and self._reads_only(arguments, allow_rules):
                return _ALLOW
            if self.mode == "acceptEdits" and self._accepts_edit(tool, arguments, allow_rules):
                return _ALLOW
            asking = Verdict("ask", f'permission mode "{self.mode}" asks before "{tool}" runs')
        elif ask is not None:
            reason = f'permission rule "{ask.text}" asks before this call{call.assumed(ask)}'
            asking = Verdict("ask", reason, ask.text)
        else:
            assert reading is not None
            reason = f'permission rule "{reading.rule.text}" asks before this call: {reading.why}'
            asking = Verdict("ask", reason, reading.rule.text)
        if self.mode == "bypassPermissions" and asking.rule is None:
            return _ALLOW  # bypass skips the mode's own ask, never an ask rule's
        if self.mode == "dontAsk":
            reason = f'{asking.reason} — refused: permission mode "dontAsk" never asks'
            return Verdict("deny", reason, asking.rule)
        return asking

    def _reading(self, rules: list[PermissionRule] | None, call: Call) -> Reading | None:
        """For a bash call: the first `Read(...)` rule among `rules` that a path the line reads
        by name matches (sure), or, failing that, one it may read without naming it — a tree
        a recursive reader walks, a word known only at run time — (not sure)."""
        if not rules or call.programs is None:
            return None
        from .call import Reading
        from .paths import PathPattern
        from .reads import line_reads

        args = call.arguments if isinstance(call.arguments, dict) else {}
        workdir = args.get("workdir")
        reads = line_reads(
            call.programs,
            workspace=self.workspace,
            workdir=workdir if isinstance(workdir, str) else None,
        )
        for rule in rules:
            spec = rule.spec
            for path in reads.paths:
                if spec is None or (isinstance(spec, PathPattern) and spec.matches(path)):
                    return Reading(rule, True, f'the command reads "{path}"')
        for rule in rules:
            spec = rule.spec
            for tree in reads.trees:
                if spec is None or (isinstance(spec, PathPattern) and spec.may_match_under(tree)):
                    why = f'the command reads the files under "{tree}", which may hold such a path'
                    return Reading(rule, False, why)
        if reads.unsure is not None:
            why = f"the command may read such a path ({reads.unsure})"
            return Reading(rules[0], False, why)
        return None

    def _plan_verdict(self, tool: str, arguments: JsonValue | None) -> Verdict | None:
        """Plan mode: Deny for a call that is not read-only, Ask for presenting the plan
        (Allow when nobody is there to accept it: `plan_needs_approval`), None (decide as
        usual) for a read-only call."""
        if tool == PLAN_TOOL:
            if self.mode != "plan" or not self.plan_needs_approval:  # the tool says why
                return _ALLOW
            return Verdict("ask", "the plan is ready: accept it to leave plan mode")
        if tool in self._read_only:
            return None
        if tool == "bash" and self._reads_only(arguments, [], forced=True):
            return None
        return Verdict("deny", plan_refusal(tool))

    def _accepts_edit(
        self, tool: str, arguments: JsonValue | None, rules: list[PermissionRule]
    ) -> bool:
        """acceptEdits: an edit tool, or a bash line of common fs commands on workspace paths
        (`modes.fs_command`) and read-only commands."""
        if tool in _EDIT_TOOLS:
            return True
        if tool != "bash":
            return False

        def covered(part: SimpleCommand) -> bool:
            return fs_command(part) or any(rule.covers(part) for rule in rules)

        return self._reads_only(arguments, rules, forced=True, covered=covered)

    def _reads_only(
        self,
        arguments: JsonValue | None,
        rules: list[PermissionRule],
        *,
        forced: bool = False,
        covered: Callable[[SimpleCommand], bool] | None = None,
    ) -> bool:
        """A bash call whose line only reads, in the workspace (`readonly`), but for simple
        commands an allow rule covers as written (`covered`, when given, decides that). `forced`
        applies the list even when `read_only_commands` is off (plan mode, acceptEdits)."""
        if not (self.read_only_commands or forced) or not isinstance(arguments, dict):
            return False
        command, workdir = arguments.get("command"), arguments.get("workdir")
        if not isinstance(command, str) or not isinstance(workdir, str | None):
            return False
        from .readonly import read_only_command  # the read-only list: at the first bash check

        def by_rule(part: SimpleCommand) -> bool:
            return any(rule.covers(part) for rule in rules)

        return read_only_command(
            command,
            workspace=self.workspace,
            workdir=workdir,
            allowed=by_rule if covered is None else covered,
        )

    def _first(
        self, rules: list[PermissionRule] | None, call: Call, *, every: bool
    ) -> PermissionRule | None:
        if not rules:
            return None
        if call.programs is not None:
            return call.matching_command_rule(rules)
        from .rules import PATH_TOOLS, paths_of

        tool, arguments = call.tool, call.arguments
        if tool in PATH_TOOLS:
            paths = paths_of(tool, arguments, self.workspace)
            if paths is None:
                return next((r for r in rules if r.spec is None), None)
            return next((r for r in rules if r.matches_paths(paths, every=every)), None)
        if tool == "web_fetch":
            url = arguments.get("url") if isinstance(arguments, dict) else None
            if not isinstance(url, str):
                return next((r for r in rules if r.spec is None), None)
            return next((r for r in rules if r.matches_url(url)), None)
        return next((r for r in rules if r.spec is None), None)

    def _allowed(self, rules: list[PermissionRule], call: Call) -> PermissionRule | None:
        """An allow rule covering the call. For bash: a bare rule, an exact rule for the whole
        line, or rules covering every simple command as written — assignments and wrappers
        included, never a resolved name — in a line read completely with no substitution."""
        if not rules:
            return None
        if call.programs is None or call.command is None:
            if call.tool == "bash":
                return next((r for r in rules if r.spec is None), None)
            return self._first(rules, call, every=True)
        bare = next((r for r in rules if r.spec is None), None)
        if bare is not None:
            return bare
        whole = " ".join(call.command.split())
        exact = next((r for r in rules if r.matches_command(whole) and _is_exact(r)), None)
        if exact is not None:
            return exact
        line = call.programs.line
        if line.problem is not None or line.substitutes or not line.commands:
            return None
        used: list[PermissionRule] = []
        for part in line.commands:
            rule = next((r for r in rules if r.covers(part)), None)
            if rule is None:
                return None
            used.append(rule)
        return used[0]

    # -- session rules -------------------------------------------------------------------------

    def suggest_rule(self, tool: str, arguments: JsonValue | None) -> str | None:
        """The narrowest rule that would allow this call when the mode (not a rule) asks about
        it; None when no such rule exists."""
        current = self.verdict(tool, arguments)
        if current.decision != "ask" or current.rule is not None:
            return None
        text = self._candidate(tool, arguments)
        if text is None:
            return None
        try:
            rule = self.parse(text)
        except ValueError:
            return None
        if self.verdict(tool, arguments, extra_allow=rule).decision != "allow":
            return None
        return text

    def suggest_lasting_rules(self, tool: str, arguments: JsonValue | None) -> tuple[str, ...]:
        """The rules "don't ask again" would save for a call the mode asked about: for bash the
        prefix rule of each simple command not allowed already (`Bash(npm test:*)`), or the exact
        command when one has no safe prefix; for other tools `suggest_rule`'s. Empty when no
        rule would allow the call."""
        narrow = self.suggest_rule(tool, arguments)
        if narrow is None:
            return ()
        command = arguments.get("command") if isinstance(arguments, dict) else None
        if tool != "bash" or not isinstance(command, str):
            return (narrow,)

        from .prefix import prefix_rules

        def needed(part: str) -> bool:
            return self.verdict(tool, {"command": part}).decision != "allow"

        rules = prefix_rules(command, claude_name=self.names.claude_name(tool), needed=needed)
        if not rules or not self._allows_with(tool, arguments, rules):
            return (narrow,)
        return rules

    def _allows_with(self, tool: str, arguments: JsonValue | None, texts: tuple[str, ...]) -> bool:
        """Whether the call would be allowed with `texts` added as allow rules."""
        try:
            added = [self.parse(text) for text in texts]
        except ValueError:
            return False
        for rule in added:
            self.add_allow(rule)
        try:
            return self.verdict(tool, arguments).decision == "allow"
        finally:
            for rule in added:
                self.remove_allow(rule)

    def _candidate(self, tool: str, arguments: JsonValue | None) -> str | None:
        from .rules import PATH_TOOLS, paths_of

        args = arguments if isinstance(arguments, dict) else {}
        claude = self.names.claude_name(tool)
        if tool == "bash":
            command = args.get("command")
            if not isinstance(command, str) or not command.strip():
                return None
            return f"{claude}({' '.join(command.split())})"
        if tool in PATH_TOOLS:
            paths = paths_of(tool, arguments, self.workspace)
            if paths is None or any(c in paths[0] for c in "*?["):
                return None
            family = self.names.claude_name("edit" if tool in _EDIT_TOOLS else "read")
            return f"{family}({self._path_form(paths[0])})"
        if tool == "web_fetch":
            url = args.get("url")
            host = urlsplit(url).hostname if isinstance(url, str) else None
            return None if not host else f"{claude}(domain:{host.lower()})"
        return claude

    def _path_form(self, path: str) -> str:
        root = os.path.normpath(str(self.workspace))
        if path == root:
            return "./"
        if path.startswith(root.rstrip("/") + "/"):
            return "./" + path[len(root.rstrip("/")) + 1 :]
        return "/" + path


def _is_exact(rule: PermissionRule) -> bool:
    spec = rule.spec
    return spec is not None and getattr(spec, "kind", None) == "exact"

"""The `approval` service (CONTRACT §4.4): how an `Ask` becomes an answer.

Mount: `await ctx.plugin(Approval, {"non_interactive": "unavailable"})` (entry point
`approval`); provides `ctx.approval`. The registry calls `await ctx.approval.request(request)`
for every `Ask` that has an agent; the answer is one of the four `ApprovalOutcome`s.

Who answers:
  * a `Prompter` attached with `approval.attach(prompter)` (the terminal in `tether chat`): it is
    shown an `ApprovalQuestion` — the tool, its arguments, the ask's reason and, when the
    `permissions` service can name them, the rule "allow for this session" would add and the
    rules "don't ask again" would save (with the file they go to) — and answers `allow-once`,
    `allow-session` (the rule is added to `ctx.permissions` for the rest of the session, then
    `allowed-once`), `allow-always` (the rules are saved to the project's
    `.claude/settings.local.json` and allowed from now on, after a restart too, then
    `allowed-once`; a file that cannot be updated is logged and the call is allowed once),
    `reject` (`rejected`) or `Rejection(reason)` (`rejected`; the denial the model reads ends
    with `: <reason>`, through a `tools/post-execute` listener, and `approval/decided` records
    the reason);
  * without a prompter, the configured `non_interactive` answer: `unavailable` (default),
    `allow` (`allowed-once`) or `deny` (`rejected`).

Unattended front ends (`tether run`): `approval.refuse_unattended(note)` makes the `unavailable`
answer say why and what to do. While no prompter is attached, an `Ask` the `tools/pre-execute`
chain returns is answered here (audited like any other) and the call is denied with

    tool "<name>" requires approval, but no approval channel is available (<note(question)>)

so the model learns it should try something else, and the user how to allow it. This applies
only while `non_interactive` is `unavailable`, the call has an agent and its signal has not
aborted (those cases go to the registry as usual); the listener is prepended at `start`, so it
sees the whole chain's decision unless a later plugin prepends its own.

Calls dispatch refuses anyway are never asked about: when the tool is not there for the call's
agent (looked up through the call's scope) or its definition's own validator refuses the
arguments, an `Ask` becomes `Allow` and dispatch answers `UNKNOWN_TOOL` / `INVALID_ARGS` before
any body runs. (Arguments that are not JSON never get here: the agent loop answers them.)

Leaving the sandbox: `escalate(request)` asks a `sandbox-escalation` question (the `bash` tool
asks it when a command failed in a way the sandbox may have caused: may it run once outside?).
Only a prompter answers it (`allow-once` or a rejection; no session rule is offered); without
one it is `unavailable` whatever `non_interactive` says. It is audited like an `Ask`, with
`kind: sandbox-escalation` in both events.

Hooks: after pre-flight, `approval/permission-request` listeners (serial, `(exec, reason) ->
Allow | Deny | None`; the hooks' PermissionRequest) may settle the ask — Allow runs the call,
Deny refuses it with its reason — before anyone answers it; and before a prompter is asked,
`approval/notification` listeners (parallel; the hooks' Notification, `permission_prompt`) are
awaited.

Pre-flight: before an `Ask` is answered, `approval/preflight` listeners (serial, `(exec) -> str |
None`) may name the error the call would fail with anyway (the fs plugin: an edit of a file never
read); the call is then denied with that text and nobody is asked.

Cancellation: the pending question observes the request's signal (the caller's). If it is
already aborted the prompter is not asked; if it aborts while the prompter waits, the prompter is
cancelled (`signal.cancels()`) and the answer is `cancelled` — which the registry turns into
`ABORTED_BEFORE_DISPATCH`. A prompter that raises, or answers something else, counts as
`unavailable` (logged).

Audit: every request appends `approval/asked` and `approval/decided` to the agent's session (when
it has one), both carrying `fingerprint` — `sha256:<hex>` of the call's arguments as canonical
JSON (sorted keys, no whitespace, UTF-8) — so the log says exactly what was approved:

    approval/asked    {turn?, call_id, tool_name, reason?, fingerprint, session_rule?,
                       lasting_rules?}
    approval/decided  {turn?, call_id, tool_name, outcome, answered_by, fingerprint,
                       session_rule?, saved_rules?, saved_to?, reason?}

`answered_by` is `user`, `policy` (no prompter) or `signal` (cancelled before any answer).
The arguments are found through a `tools/pre-execute` listener that remembers each call until its
`tools/result`.

The question and the prompter's answers live in `questions.py` (re-exported here, their former
home), the writing of the audit events in `_audit.py` (imported at the first question).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Final, Literal, Protocol

from ...core.errors import error_message
from ...core.json import JsonValue
from ...core.lazy import lazy_names
from ...core.signals import AbortSignal
from ...kernel import Service, declare_event
from ...kernel.config_models import ConfigValue
from ...tools.approval import ApprovalOutcome, ApprovalRequest
from ...tools.decisions import (
    MISSING,
    Accept,
    Allow,
    Ask,
    Deny,
    PostToolDecision,
    PreToolDecision,
)
from ...tools.errors import ToolArgsError
from ...tools.execution import ToolExecution
from ...tools.registry import ToolsView
from ...tools.results import ToolExecutionResult, text_content

if TYPE_CHECKING:
    from ...kernel import Context
    from ._audit import _Added, _Audit
    from .elicitation import ElicitationQuestion, ElicitationReply
    from .questions import (
        ApprovalAnswer,
        ApprovalQuestion,
        Prompter,
        QuestionKind,
        Rejection,
        Unanswerable,
        fingerprint,
    )

__all__ = [
    "NOTIFICATION_EVENT",
    "PERMISSION_REQUEST_EVENT",
    "PREFLIGHT_EVENT",
    "Approval",
    "ApprovalAnswer",
    "ApprovalConfig",
    "ApprovalQuestion",
    "Prompter",
    "QuestionKind",
    "Rejection",
    "Unanswerable",
    "fingerprint",
]

_log = logging.getLogger("tether.plugins.approval")

_QUESTIONS: Final = frozenset(
    {
        "ApprovalAnswer",
        "ApprovalQuestion",
        "Prompter",
        "QuestionKind",
        "Rejection",
        "Unanswerable",
        "fingerprint",
    }
)
"""Names of `questions.py` (re-exported here, their former home), imported at their first use:
a boot asks no question (issue 36)."""


__getattr__, __dir__ = lazy_names(globals(), dict.fromkeys(_QUESTIONS, ".questions"))


PREFLIGHT_EVENT: Final = declare_event("approval/preflight")
"""serial `(exec) -> str | None`: the error a call that is about to be asked about would fail
with anyway (the call is denied with it, nobody is asked), or None."""
PERMISSION_REQUEST_EVENT: Final = declare_event("approval/permission-request")
"""serial `(exec, reason) -> Allow | Deny | None`: settles an ask before anyone (a person or
the `non_interactive` policy) answers it — the hooks' PermissionRequest; None: ask as usual."""
NOTIFICATION_EVENT: Final = declare_event("approval/notification")
"""parallel `(agent, notification_type, tool_name, signal)`: a person is about to be asked
(`permission_prompt`), or the chat's prompt has waited for the user (`idle_prompt`, tool_name
"": `tether.cli.chat.idle`) — the hooks' Notification."""


class ApprovalConfig(ConfigValue):
    """`non_interactive`: the answer when no prompter is attached."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models

    non_interactive: Literal["unavailable", "allow", "deny"] = "unavailable"
    non_interactive_elicitation: Literal["decline", "cancel"] = "decline"
    """The answer to an elicitation (a server's form) when no prompter can show it."""


_POLICY_OUTCOME: dict[str, ApprovalOutcome] = {
    "unavailable": "unavailable",
    "allow": "allowed-once",
    "deny": "rejected",
}


class _SessionRules(Protocol):
    def suggest_rule(self, tool: str, arguments: JsonValue | None) -> str | None: ...
    def allow_for_session(self, rule: str) -> None: ...


class _LastingRules(Protocol):
    @property
    def settings_file(self) -> Path: ...
    def suggest_lasting_rules(self, tool: str, arguments: JsonValue | None) -> tuple[str, ...]: ...
    def allow_always(self, rules: Sequence[str]) -> Path: ...


class Approval(Service):
    """`ctx.approval` (see the module note)."""

    name: ClassVar[str] = "approval"
    Config: ClassVar[type[ApprovalConfig]] = ApprovalConfig

    def __init__(self, ctx: Context, config: ApprovalConfig | None = None) -> None:
        super().__init__(ctx, config)
        self._config = ApprovalConfig() if config is None else config
        self._prompter: Prompter | None = None
        self._note: Callable[[ApprovalQuestion], str] | None = None
        self._calls: dict[str, ToolExecution] = {}
        self._reasons: dict[str, str] = {}

    async def start(self) -> None:
        self.ctx.on("tools/pre-execute", self._pre_execute, prepend=True)
        self.ctx.on("tools/post-execute", self._explain, prepend=True)
        self.ctx.on("tools/result", self._forget)

    async def _explain(
        self,
        exec: ToolExecution,
        result: ToolExecutionResult,
        next: Callable[[], Awaitable[PostToolDecision]],
    ) -> PostToolDecision:
        """A call the user rejected with a reason: the model reads the reason too."""
        reason = self._reasons.pop(exec.call_id, None)
        decision = await next()
        if reason is None or not isinstance(decision, Accept) or decision.content is not MISSING:
            return decision
        text = f'Error: the user rejected tool "{exec.name}": {reason}'
        return Accept(content=text_content(text), additional_contexts=decision.additional_contexts)

    async def _pre_execute(
        self, exec: ToolExecution, next: Callable[[], Awaitable[PreToolDecision]]
    ) -> PreToolDecision:
        self._calls[exec.call_id] = exec
        decision = await next()
        if isinstance(decision, Ask) and not exec.signal.aborted:
            if self._dispatch_refuses(exec):
                return Allow()  # dispatch answers UNKNOWN_TOOL / INVALID_ARGS; nobody is asked
            problem = await self._preflight(exec)
            if problem is not None:
                return Deny(problem)
            settled = await self._permission_request(exec, decision.reason)
            if settled is not None:
                return settled
        note = self._note
        if (
            not isinstance(decision, Ask)
            or note is None
            or self._prompter is not None
            or self._config.non_interactive != "unavailable"
            or exec.agent is None
            or exec.signal.aborted
        ):
            return decision
        question = self._question(
            exec.name, exec.call_id, exec.arguments, decision.reason, suggest=True
        )
        offered = replace(question, session_rule=None, lasting_rules=(), saved_to=None)
        audit = _audit_of(exec.agent, offered)  # nothing was offered
        audit.asked()
        audit.decided("unavailable", "policy", None)
        try:
            why = note(question)
        except Exception as exc:
            _log.warning("approval: the unattended note failed: %s", error_message(exc))
            why = "nobody can answer here"
        return Deny(
            f'tool "{exec.name}" requires approval, but no approval channel is available ({why})'
        )

    def _dispatch_refuses(self, exec: ToolExecution) -> bool:
        """Whether dispatch will refuse the call before its body runs: the tool is not there
        for the call's agent (`UNKNOWN_TOOL`), or its own validator refuses the arguments
        (`INVALID_ARGS`)."""
        tools = self.ctx.get("tools")
        if not isinstance(tools, ToolsView):
            return False
        definition = tools.get(exec.name, exec.agent)
        if definition is None:
            return True
        check = definition.check_arguments
        if check is None:
            return False
        try:
            check(exec.arguments)
        except ToolArgsError:
            return True
        except Exception as exc:
            _log.warning("approval: validating %s's arguments failed: %s", exec.name, exc)
        return False

    async def _preflight(self, exec: ToolExecution) -> str | None:
        try:
            problem = await self.ctx.serial(PREFLIGHT_EVENT, exec)
        except Exception as exc:
            _log.warning("approval: a pre-flight check failed: %s", error_message(exc))
            return None
        return problem if isinstance(problem, str) and problem else None

    async def _permission_request(
        self, exec: ToolExecution, reason: str | None
    ) -> Allow | Deny | None:
        try:
            settled = await self.ctx.serial(PERMISSION_REQUEST_EVENT, exec, reason)
        except Exception as exc:
            _log.warning("approval: a permission-request listener failed: %s", error_message(exc))
            return None
        return settled if isinstance(settled, Allow | Deny) else None

    async def _notify(self, request: ApprovalRequest) -> None:
        try:
            await self.ctx.parallel(
                NOTIFICATION_EVENT,
                request.agent,
                "permission_prompt",
                request.tool_name,
                request.signal,
            )
        except Exception as exc:
            _log.warning("approval: a notification listener failed: %s", error_message(exc))

    def _forget(self, exec: ToolExecution, result: ToolExecutionResult) -> None:
        if self._calls.get(exec.call_id) is exec:
            del self._calls[exec.call_id]
        self._reasons.pop(exec.call_id, None)

    # -- the service ---------------------------------------------------------------------------

    def attach(self, prompter: Prompter) -> Callable[[], None]:
        """Answer with `prompter` until the returned remover runs. Raises RuntimeError when one
        is already attached."""
        if self._prompter is not None:
            raise RuntimeError("an approval prompter is already attached")
        self._prompter = prompter

        def detach() -> None:
            if self._prompter is prompter:
                self._prompter = None

        return detach

    def refuse_unattended(self, note: Callable[[ApprovalQuestion], str]) -> Callable[[], None]:
        """While no prompter is attached, deny asks at once with `note(question)` appended to the
        `unavailable` text (see the module note); until the returned remover runs. Raises
        RuntimeError when a note is already set."""
        if self._note is not None:
            raise RuntimeError("an unattended note is already set")
        self._note = note

        def remove() -> None:
            if self._note is note:
                self._note = None

        return remove

    @property
    def interactive(self) -> bool:
        """Whether a prompter is attached."""
        return self._prompter is not None

    async def request(self, request: ApprovalRequest) -> ApprovalOutcome:
        """Answer one `Ask` (see the module note). Never raises but for the cancellation of the
        awaiting task."""
        exec = self._calls.get(request.call_id)
        arguments = exec.arguments if exec is not None and exec.name == request.tool_name else None
        question = self._question(
            request.tool_name,
            request.call_id,
            arguments,
            request.reason,
            suggest=self._prompter is not None,
        )
        audit = _audit_of(request.agent, question)
        audit.asked()
        if self._prompter is not None and not request.signal.aborted:
            await self._notify(request)
        outcome, answered_by, added = await self._answer(request, question, self._session_rules())
        audit.decided(outcome, answered_by, added, self._reasons.get(request.call_id))
        return outcome

    def _save(self, question: ApprovalQuestion) -> _Added | None:
        """Save the question's lasting rules; None (logged) when they could not be."""
        keeper = self._lasting_rules()
        if keeper is None or not question.lasting_rules:
            return None
        try:
            path = keeper.allow_always(question.lasting_rules)
        except Exception as exc:
            _log.warning(
                "approval: could not save %s: %s (allowed once)",
                ", ".join(question.lasting_rules),
                error_message(exc),
            )
            return None
        from ._audit import _Added  # after a question: its audit module is loaded

        return _Added(saved=question.lasting_rules, saved_to=str(path))

    def _question(
        self,
        tool: str,
        call_id: str,
        arguments: JsonValue | None,
        reason: str | None,
        *,
        suggest: bool,
    ) -> ApprovalQuestion:
        """The question; with `suggest`, the session rule that would allow the call, if any."""
        from .questions import ApprovalQuestion, fingerprint  # at the first question (issue 36)

        rules = self._session_rules()
        rule = None
        if rules is not None and suggest:
            try:
                rule = rules.suggest_rule(tool, arguments)
            except Exception as exc:
                _log.warning("approval: could not suggest a session rule: %s", error_message(exc))
        lasting: tuple[str, ...] = ()
        saved_to = None
        keeper = self._lasting_rules()
        if keeper is not None and suggest and rule is not None:
            try:
                lasting = tuple(keeper.suggest_lasting_rules(tool, arguments))
                saved_to = str(keeper.settings_file)
            except Exception as exc:
                _log.warning("approval: could not suggest a lasting rule: %s", error_message(exc))
        return ApprovalQuestion(
            tool_name=tool,
            call_id=call_id,
            arguments=arguments,
            reason=reason,
            session_rule=rule,
            fingerprint=fingerprint(arguments),
            lasting_rules=lasting,
            saved_to=saved_to if lasting else None,
        )

    async def escalate(self, request: ApprovalRequest) -> ApprovalOutcome:
        """Ask whether a command the sandbox may have stopped (`request.reason` says how) may
        run once outside it — a `sandbox-escalation` question. Only a person answers it: without
        a prompter the answer is `unavailable`, whatever `non_interactive` says (a policy, or
        `--yolo`, never takes a command out of the sandbox). Audited like `request`, with `kind`.
        Never raises but for the cancellation of the awaiting task."""
        exec = self._calls.get(request.call_id)
        arguments = exec.arguments if exec is not None and exec.name == request.tool_name else None
        question = replace(
            self._question(
                request.tool_name, request.call_id, arguments, request.reason, suggest=False
            ),
            kind="sandbox-escalation",
        )
        audit = _audit_of(request.agent, question)
        audit.asked()
        outcome: ApprovalOutcome
        if self._prompter is None:
            outcome, answered_by = "unavailable", "policy"
        else:
            outcome, answered_by, _ = await self._answer(request, question, None)
        audit.decided(outcome, answered_by, None, self._reasons.get(request.call_id))
        return outcome

    async def _answer(
        self, request: ApprovalRequest, question: ApprovalQuestion, rules: _SessionRules | None
    ) -> tuple[ApprovalOutcome, str, _Added | None]:
        from .questions import Rejection, Unanswerable  # a question was asked: it is loaded

        if request.signal.aborted:
            return "cancelled", "signal", None
        prompter = self._prompter
        if prompter is None:
            return _POLICY_OUTCOME[self._config.non_interactive], "policy", None
        try:
            async with request.signal.cancels():
                answer: object = await prompter.ask(question)
        except Unanswerable:
            return _POLICY_OUTCOME[self._config.non_interactive], "policy", None
        except Exception as exc:
            if request.signal.aborted:
                return "cancelled", "signal", None
            _log.warning("approval: the prompter failed: %s", error_message(exc))
            return "unavailable", "user", None
        if answer == "allow-once":
            return "allowed-once", "user", None
        if answer == "reject":
            return "rejected", "user", None
        if isinstance(answer, Rejection):
            if answer.reason.strip():
                self._reasons[request.call_id] = " ".join(answer.reason.split())
            return "rejected", "user", None
        if answer == "allow-session" and question.session_rule is not None and rules is not None:
            try:
                rules.allow_for_session(question.session_rule)
            except Exception as exc:
                _log.warning("approval: could not add the session rule: %s", error_message(exc))
                return "allowed-once", "user", None
            from ._audit import _Added  # after a question: its audit module is loaded

            return "allowed-once", "user", _Added(session=question.session_rule)
        if answer == "allow-always" and question.lasting_rules:
            return "allowed-once", "user", self._save(question)
        _log.warning("approval: the prompter answered %r, which is not an answer", answer)
        return "unavailable", "user", None

    async def elicit(
        self, question: ElicitationQuestion, *, signal: AbortSignal
    ) -> ElicitationReply:
        """Put a form to the user: the attached prompter's `elicit` when it has one, else the
        `non_interactive_elicitation` answer (decline by default). On accept, absent fields with
        a schema default get it (SEP-1034). `cancel` when `signal` aborts first. Never raises but
        for the cancellation of the awaiting task."""
        from .elicitation import ElicitationReply, with_defaults  # a form is rare: not at boot
        from .questions import Unanswerable

        if signal.aborted:
            return ElicitationReply("cancel")
        show = getattr(self._prompter, "elicit", None)
        if not callable(show):
            return ElicitationReply(self._config.non_interactive_elicitation)
        try:
            async with signal.cancels():
                reply: object = await show(question)
        except Exception as exc:
            if signal.aborted:
                return ElicitationReply("cancel")
            if not isinstance(exc, Unanswerable):
                _log.warning("approval: the prompter failed a form: %s", error_message(exc))
            return ElicitationReply(self._config.non_interactive_elicitation)
        if not isinstance(reply, ElicitationReply):
            _log.warning("approval: the prompter answered %r, which is not a form answer", reply)
            return ElicitationReply("cancel")
        if reply.action != "accept":
            return ElicitationReply(reply.action)
        return ElicitationReply("accept", with_defaults(question.fields, reply.content))

    def _session_rules(self) -> _SessionRules | None:
        service = self.ctx.get("permissions")
        suggest = getattr(service, "suggest_rule", None)
        add = getattr(service, "allow_for_session", None)
        return service if callable(suggest) and callable(add) else None  # type: ignore[return-value]

    def _lasting_rules(self) -> _LastingRules | None:
        service = self.ctx.get("permissions")
        suggest = getattr(service, "suggest_lasting_rules", None)
        save = getattr(service, "allow_always", None)
        return service if callable(suggest) and callable(save) else None  # type: ignore[return-value]


def _audit_of(agent: object, question: ApprovalQuestion) -> _Audit:
    """The audit trail of one question."""
    from ._audit import _Audit  # writing the audit: at the first question (issue 36)

    return _Audit(agent, question)

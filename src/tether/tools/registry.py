"""The tool registry service, `ctx.tools`: registration, lookup, guards, and the pipeline.

Owns: the global layer and one layer per agent scope (tools, guards, restrictions; layers.py),
the one visibility resolver, `register`/`get`/`names`/`schemas`/`guard`/`restrict`/`execute`/
`execution_mode`, and the staged API the agent loop drives (`prepare`/`dispatch`/`finalize`/
`finish`, inherited from `tether.tools.pipeline`). Registrations made through a plugin's context
belong to that plugin and are undone when it is disposed. Mounting the service provides
`ctx.tools` and nothing else: no tools, listeners, guards or approval service.

Agent scopes (spec §1.6.6, tool-runtime §1.18, §7.5). Through a scoped context (`ctx.scope(agent)`,
tether.kernel.context) `tools.register` puts a tool in that agent's layer, `tools.guard` adds a
guard that sees only calls whose `exec.agent` is that agent or a descendant, and
`tools.restrict({"allow": [...], "deny": [...]})` masks the names the scope inherits (layers.py
has the rules and the exact error texts). Disposing the scoped context removes all of it.
Visibility is one function, `_find(name, scope)`, behind `get(name, agent)`, `names(agent)`,
`schemas(agent)`, `execution_mode(input)`, the `code`-mode route check and both lookups of a call
(at creation, for its finalizer, and at dispatch): the nearest layer that has the name wins —
the agent's own layer, then its ancestors' nearest first, then the global layer — and each
scope's mask applies to what it inherits, so a name masked anywhere on the way is invisible, and
a scope's own tools are never masked by its own restrictions. A name not visible to the caller is
`UNKNOWN_TOOL` (`unknown tool "<name>"`) at dispatch. A call remembers the scope it was created
in: if that scope is disposed before the call dispatches, nothing is visible to it any more
(`UNKNOWN_TOOL`) rather than the unmasked global layer; an agent without a live scope sees the
global layer. Guards run global first, then the agent's chain, farthest ancestor first. Through
a scoped context, `get`/`names`/`schemas` default to that agent's view.

Registration texts: a taken name in the global layer ``tool "<name>" is already registered (for
a per-agent variant, register through that agent's context instead)``, in a scope ``tool
"<name>" is already registered in this scope``. `run_code` is reserved for the Code Mode plugin,
which registers it with `register(definition, reserved=True)`; any other registration of that
name is refused with ``tool name "run_code" is reserved for the Code Mode presentation transport
and cannot be registered or shadowed`` (globally followed by ``; only tether.plugins.code_mode
registers it``), and a scope can never register it, reserved or not. `reserved=True` on any other
name is refused too.

Presentation modes (spec §8.1, config `mode`): `native` (the default) sends every visible
schema but `run_code`; `code` sends only `run_code` and refuses a model-direct call (no `parent`)
to any other visible tool with `UNKNOWN_TOOL` and the route message; `both` sends everything.

A budget needs an enforcer: `timeout_ms` does nothing unless a timeout policy (the
`tether.plugins.timeout_policy` plugin, or one of your own) has called
`ctx.tools.declare_timeout_policy()`. A tool that declares `timeout_ms` and is registered while
none is declared is checked at its first call: if there is still none then, one WARNING on the
`tether.tools` logger names it (once per tool name). Checking at the first call rather than at
registration makes the warning independent of mount order — registering tools before mounting
the policy is fine — and costs nothing once every such tool has been called or a policy is
declared.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, ClassVar, Final, Literal

from ..core.errors import HarnessError
from ..core.json import JsonValue, NotLosslessJson, snapshot, thaw
from ..core.timeout import format_ms
from ..kernel import Context, Service
from ..kernel.agent_scope import AgentScope
from ..kernel.config_models import ConfigValue
from .definition import ToolDefinition, ToolOutput, timeout_too_long
from .execution import Call, ToolExecutionInput
from .layers import (
    RESTRICT_UNSCOPED,
    RUN_CODE,
    GuardTable,
    Layer,
    ToolGuard,
    parse_restriction,
)
from .pipeline import Pipeline
from .results import ToolExecutionResult, failure_from

if TYPE_CHECKING:  # resolved where a config mapping is validated (tether.kernel.config_models)
    from pydantic import Field

__all__ = ["RUN_CODE", "PresentationMode", "ToolGuard", "ToolRuntime", "ToolsConfig"]

PresentationMode = Literal["native", "code", "both"]

RESERVED: Final = (
    f'tool name "{RUN_CODE}" is reserved for the Code Mode presentation transport and cannot be '
    "registered or shadowed"
)


class ToolsConfig(ConfigValue):
    """`ctx.tools` config: `mode` is the presentation mode (see the module docstring)."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}

    mode: PresentationMode = "native"
    slow_stop_after_s: Annotated[float | None, Field(gt=0)] = 5.0
    """Seconds a running body may take to settle after its signal aborted before the registry
    says why (`tools/slow-stop`, tether.tools.slow_stop); None: never."""


class _CodeOnlyRoute(HarnessError):
    """A model-direct call to a tool that `code` mode reaches only from a program."""

    name = "ToolNotFoundError"

    def __init__(self, tool_name: str) -> None:
        super().__init__(
            f'unknown tool "{tool_name}": only `run_code` is callable directly — call '
            f"`{tool_name}` from inside a `run_code` program instead",
            "UNKNOWN_TOOL",
        )


_log = logging.getLogger("tether.tools")


def _check_definition(defn: ToolDefinition) -> None:
    if not isinstance(defn, ToolDefinition):
        raise TypeError(
            "register() takes a ToolDefinition (see define_tool / @tool); "
            f"got {type(defn).__name__}"
        )
    output = defn.output
    if not (
        isinstance(output, ToolOutput)
        and callable(output.render)
        and (output.presentation_meta is None or callable(output.presentation_meta))
    ):
        raise TypeError(
            f'tool "{defn.name}" must declare output {{ schema, render, presentation_meta? }}'
        )
    t = defn.timeout_ms
    if t is not None and (
        isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t <= 0
    ):
        raise ValueError(f'tool "{defn.name}" timeout_ms must be a positive finite number')
    too_long = None if t is None else timeout_too_long(t)
    if too_long is not None:
        raise ValueError(f'tool "{defn.name}" {too_long}')


def _check_reservation(name: str, scope: AgentScope | None, reserved: bool) -> None:
    if name == RUN_CODE:
        if scope is not None:
            raise ValueError(RESERVED)
        if not reserved:
            raise ValueError(f"{RESERVED}; only tether.plugins.code_mode registers it")
    elif reserved:
        raise ValueError(
            f'register(reserved=True) is only for the Code Mode tool "{RUN_CODE}"; '
            f'register "{name}" without it'
        )


class ToolRuntime(Service, Pipeline):
    """`ctx.tools`. Mount with `await ctx.plugin(ToolRuntime)`."""

    name: ClassVar[str] = "tools"
    Config: ClassVar[type[ToolsConfig]] = ToolsConfig

    def __init__(self, ctx: Context, config: object = None) -> None:
        self.mode: PresentationMode = config.mode if isinstance(config, ToolsConfig) else "native"
        if isinstance(config, ToolsConfig):
            self._slow_stop_after_s = config.slow_stop_after_s
        if self.mode == "code":  # only then: the native path keeps its plain `_create`
            self._create = self._create_code_only  # type: ignore[method-assign]
        self._ctx = ctx
        self._bus = ctx
        self._events = ctx._events
        self._table = ctx._events.untagged
        self._agents = ctx._agents
        self._tools: dict[str, ToolDefinition] = {}
        self._lookup = self._tools.get
        self._layers: dict[AgentScope, Layer] = {}
        self._schemas: dict[int, tuple[ToolDefinition, JsonValue]] = {}
        self._guards = GuardTable()  # the global layer's guards
        self._live_guards = 0
        self._timeout_policies = 0
        self._unpoliced: set[str] = set()
        """Tools with `timeout_ms` registered while no timeout policy was declared, not yet
        called; while non-empty, lookups go through `_lookup_checking`."""
        self._warned: set[str] = set()

    def __tether_bind__(self, ctx: Context) -> ToolsView:
        return ToolsView(self, ctx)

    # -- visibility ----------------------------------------------------------------------------

    def _scope_of(self, agent: object | None) -> AgentScope | None:
        """The live (or closing) scope keyed by `agent`, None for no agent or an unscoped one."""
        return None if agent is None else self._agents.lookup(agent)

    def _find(self, name: str, scope: AgentScope | None) -> ToolDefinition | None:
        """THE visibility resolver (see the module note): the definition `name` reaches from
        `scope` (None: the global layer alone), or None. Pure: no warning, no event."""
        if scope is not None and name != RUN_CODE:
            if scope.closed:
                return None
            layers = self._layers
            node: AgentScope | None = scope
            while node is not None:
                layer = layers.get(node)
                if layer is not None:
                    found = layer.tools.get(name)
                    if found is not None:
                        return found
                    if not layer.admits(name):
                        return None
                node = node.parent
        return self._tools.get(name)

    def _visible(self, name: str, scope: AgentScope | None) -> ToolDefinition | None:
        """`_find` for a call being created or dispatched (with the unpoliced-budget check);
        the pipeline uses `_lookup` instead when the call has no scope."""
        found = self._find(name, scope)
        if self._unpoliced and name in self._unpoliced and found is not None:
            self._first_call_unpoliced(name, found)
        return found

    def _visible_definitions(self, scope: AgentScope | None) -> list[ToolDefinition]:
        """Every definition visible from `scope`: global registration order first, then the
        names the scope chain adds, farthest layer first (a shadowing tool keeps the place of
        the name it shadows)."""
        if scope is None:
            return list(self._tools.values())
        names: dict[str, None] = dict.fromkeys(self._tools)
        if not scope.closed:
            for node in scope.chain:
                layer = self._layers.get(node)
                if layer is not None:
                    names.update(dict.fromkeys(layer.tools))
        out = []
        for name in names:
            found = self._find(name, scope)
            if found is not None:
                out.append(found)
        return out

    def _inherited(self, scope: AgentScope) -> set[str]:
        """The names `scope` inherits, before any mask: global and its ancestors' own."""
        names = set(self._tools)
        for node in scope.chain[:-1]:
            layer = self._layers.get(node)
            if layer is not None:
                names.update(layer.tools)
        return names

    def _layer(self, scope: AgentScope) -> Layer:
        layer = self._layers.get(scope)
        if layer is None:
            layer = self._layers[scope] = Layer()
        return layer

    def _prune(self, scope: AgentScope, layer: Layer) -> None:
        if layer.empty and self._layers.get(scope) is layer:
            del self._layers[scope]

    # -- the registry --------------------------------------------------------------------------

    def register(
        self,
        definition: ToolDefinition,
        *,
        owner: Context | None = None,
        reserved: bool = False,
    ) -> Callable[[], None]:
        """Add a tool to the global layer, or to the agent's layer when `owner` is a scoped
        context; returns its disposer (also run when the owner is disposed).

        `reserved=True` is for the Code Mode plugin's `run_code` only (module note). Raises
        `TypeError`/`ValueError` for a malformed definition, `ValueError` for a name taken in
        that layer or a reserved name. If a `tools/change` listener raises, the registration is
        rolled back and the error propagates.
        """
        _check_definition(definition)
        name = definition.name
        scope = None if owner is None else owner._agent
        _check_reservation(name, scope, reserved)
        if scope is None:
            table = self._tools
            if name in table:
                raise ValueError(
                    f'tool "{name}" is already registered (for a per-agent variant, register '
                    "through that agent's context instead)"
                )
        else:
            if owner is not None:
                owner._scope.ensure_active()
            existing = self._layers.get(scope)
            if existing is not None and name in existing.tools:
                raise ValueError(f'tool "{name}" is already registered in this scope')
            layer = self._layer(scope)
            table = layer.tools
        table[name] = definition
        try:
            self._ctx.emit("tools/change")
        except BaseException:
            del table[name]
            if scope is not None:
                self._prune(scope, layer)
            raise
        if definition.timeout_ms is not None and not self._timeout_policies:
            self._unpoliced.add(name)
            self._lookup = self._lookup_checking

        def unregister() -> None:
            if table.get(name) is definition:
                del table[name]
                self._schemas.pop(id(definition), None)
                if scope is not None:
                    self._prune(scope, layer)
                try:
                    self._ctx.emit("tools/change")
                except Exception:
                    _log.warning(
                        "tools/change listener failed after removing %r", name, exc_info=True
                    )

        if owner is not None:
            return owner.effect(unregister)
        return unregister

    def get(self, name: str, agent: object | None = None) -> ToolDefinition | None:
        """The definition `name` reaches for `agent` (None: the global layer), or None."""
        if agent is None:  # `_find`'s global case, without its frames (policies call this)
            return self._tools.get(name)
        return self._find(name, self._agents.lookup(agent))

    def names(self, agent: object | None = None) -> list[str]:
        """Names visible to `agent` (None: the global layer), in registration order."""
        return [defn.name for defn in self._visible_definitions(self._scope_of(agent))]

    def schemas(self, agent: object | None = None) -> list[dict[str, JsonValue]]:
        """`{"name", "description", "parameters"}` per tool the model is sent, in registration
        order; a fresh deep copy each time. Never a callback, `timeout_ms` or output schema.
        Which tools depends on `agent`'s view and the presentation mode (module docstring)."""
        out: list[dict[str, JsonValue]] = []
        mode = self.mode
        for defn in self._visible_definitions(self._scope_of(agent)):
            if (defn.name == RUN_CODE) != (mode == "code") and mode != "both":
                continue
            cached = self._schemas.get(id(defn))
            if cached is None or cached[0] is not defn:
                try:
                    frozen = snapshot(dict(defn.parameters))
                except NotLosslessJson:
                    raise TypeError(
                        f'tool "{defn.name}" parameters must be lossless JSON '
                        "before schema projection"
                    ) from None
                cached = (defn, frozen)
                self._schemas[id(defn)] = cached
            out.append(
                {"name": defn.name, "description": defn.description, "parameters": thaw(cached[1])}
            )
        return out

    def restrict(
        self, spec: Mapping[str, object], *, owner: Context | None = None
    ) -> Callable[[], None]:
        """Mask what the agent scope of `owner` inherits (layers.py has the rules and texts);
        returns the remover (also run when the scope is disposed). Emits `tools/change`; if a
        listener raises, the restriction is rolled back and the error propagates."""
        scope = None if owner is None else owner._agent
        if owner is None or scope is None:
            raise ValueError(RESTRICT_UNSCOPED)
        owner._scope.ensure_active()
        restriction = parse_restriction(spec, self._inherited(scope))
        layer = self._layer(scope)
        remove = layer.restrict(restriction)
        try:
            self._ctx.emit("tools/change")
        except BaseException:
            remove()
            self._prune(scope, layer)
            raise

        def unrestrict() -> None:
            if remove():
                self._prune(scope, layer)
                try:
                    self._ctx.emit("tools/change")
                except Exception:
                    _log.warning(
                        "tools/change listener failed after a restriction ended", exc_info=True
                    )

        return owner.effect(unrestrict)

    # -- the timeout budget's enforcer ---------------------------------------------------------

    def declare_timeout_policy(self, *, owner: Context | None = None) -> Callable[[], None]:
        """Record that a timeout policy enforces `timeout_ms` from now on (see the module note);
        returns the remover (also run when the owning plugin is disposed)."""
        self._timeout_policies += 1
        self._unpoliced.clear()
        self._lookup = self._tools.get
        removed = False

        def remove() -> None:
            nonlocal removed
            if not removed:
                removed = True
                self._timeout_policies -= 1

        if owner is not None:
            return owner.effect(remove)
        return remove

    def _lookup_checking(self, name: str) -> ToolDefinition | None:
        found = self._tools.get(name)
        if name in self._unpoliced and found is not None:
            self._first_call_unpoliced(name, found)
        return found

    def _first_call_unpoliced(self, name: str, definition: ToolDefinition) -> None:
        self._unpoliced.discard(name)
        if not self._unpoliced:
            self._lookup = self._tools.get
        if definition.timeout_ms is None or name in self._warned:
            return
        self._warned.add(name)
        _log.warning(
            'tool "%s" declares timeout_ms=%s, but no timeout policy is mounted, so the budget '
            "does nothing; mount tether.plugins.timeout_policy",
            name,
            format_ms(definition.timeout_ms),
        )

    def _create_code_only(
        self, input: ToolExecutionInput, task: asyncio.Task[object] | None
    ) -> tuple[Call, ToolExecutionResult | None]:
        """`_create` under `code` mode (spec tool-runtime §1.1 step 9): a model-direct call to a
        visible tool other than `run_code` ends here, before any policy stage."""
        call, early = Pipeline._create(self, input, task)
        if early is not None or call.parent is not None or call.name == RUN_CODE:
            return call, early
        if self._find(call.name, call.scope) is None:
            return call, None
        call.finalizer = None
        return call, failure_from(_CodeOnlyRoute(call.name))

    # -- guards --------------------------------------------------------------------------------

    def guard(self, fn: ToolGuard, *, owner: Context | None = None) -> Callable[[], None]:
        """Add a synchronous guard: a returned string denies the call (monotonic: nothing can
        undo it). Evaluated only for allowed calls, in registration order. Through a scoped
        context it sees only calls whose agent is that agent or a descendant."""
        scope = None if owner is None else owner._agent
        if scope is None:
            remove = self._guards.add(fn)
            layer = None
        else:
            if owner is not None:
                owner._scope.ensure_active()
            layer = self._layer(scope)
            remove = layer.guards.add(fn)
        self._live_guards += 1

        def unguard() -> None:
            if remove():
                self._live_guards -= 1
                if scope is not None and layer is not None:
                    self._prune(scope, layer)

        if owner is not None:
            return owner.effect(unguard)
        return unguard

    def _deny_by_guard(self, call: Call) -> str | None:
        exec = call.view
        denial = self._guards.deny(exec) if self._guards.live else None
        scope = call.scope
        if denial is None and scope is not None and not scope.closed:
            layers = self._layers
            for node in scope.chain:  # farthest ancestor first
                layer = layers.get(node)
                if layer is not None and layer.guards.live:
                    denial = layer.guards.deny(exec)
                    if denial is not None:
                        break
        return denial

    # -- scheduling ----------------------------------------------------------------------------

    def execution_mode(self, input: ToolExecutionInput) -> Literal["parallel", "exclusive"]:
        """`parallel` only when the tool `input.agent` reaches has a classifier that returns
        exactly `True` for the raw arguments; unknown or hidden tools, no classifier, anything
        else or a raise: `exclusive`."""
        defn = self._find(input.name, self._scope_of(input.agent))
        if defn is None or defn.is_concurrency_safe is None:
            return "exclusive"
        try:
            return "parallel" if defn.is_concurrency_safe(input.arguments) is True else "exclusive"
        except Exception:
            return "exclusive"


class ToolsView:
    """`ctx.tools` as seen from one context: registrations belong to that context's owner (a
    plugin, or an agent scope); through a scoped context `get`/`names`/`schemas` default to
    that agent's view."""

    __slots__ = (
        "_ctx",
        "_runtime",
        "execute",
        "execution_mode",
        "finish",
        "get",
        "names",
        "prepare",
        "schemas",
    )

    def __init__(self, runtime: ToolRuntime, ctx: Context) -> None:
        self._runtime = runtime
        self._ctx = ctx
        self.execute = runtime.execute
        self.execution_mode = runtime.execution_mode
        self.prepare = runtime.prepare
        self.finish = runtime.finish
        scope = ctx._agent
        if scope is None:
            self.get = runtime.get
            self.names = runtime.names
            self.schemas = runtime.schemas
        else:  # closures, not bound methods of the view: no reference cycle per scoped context
            key = scope.key

            def get(name: str, agent: object | None = None) -> ToolDefinition | None:
                return runtime.get(name, key if agent is None else agent)

            def names(agent: object | None = None) -> list[str]:
                return runtime.names(key if agent is None else agent)

            def schemas(agent: object | None = None) -> list[dict[str, JsonValue]]:
                return runtime.schemas(key if agent is None else agent)

            self.get = get
            self.names = names
            self.schemas = schemas

    @property
    def runtime(self) -> ToolRuntime:
        """The shared service (the staged scheduler API lives there)."""
        return self._runtime

    def register(self, definition: ToolDefinition, *, reserved: bool = False) -> Callable[[], None]:
        """See `ToolRuntime.register`; owned by this view's context (its agent's layer when
        scoped). `reserved=True` is for the Code Mode plugin's `run_code` only."""
        return self._runtime.register(definition, owner=self._ctx, reserved=reserved)

    def guard(self, fn: ToolGuard) -> Callable[[], None]:
        """See `ToolRuntime.guard`; owned by this view's context."""
        return self._runtime.guard(fn, owner=self._ctx)

    def restrict(self, spec: Mapping[str, object]) -> Callable[[], None]:
        """See `ToolRuntime.restrict`; needs a scoped context (`ctx.scope(agent)`)."""
        return self._runtime.restrict(spec, owner=self._ctx)

    def declare_timeout_policy(self) -> Callable[[], None]:
        """See `ToolRuntime.declare_timeout_policy`; owned by this view's plugin."""
        return self._runtime.declare_timeout_policy(owner=self._ctx)

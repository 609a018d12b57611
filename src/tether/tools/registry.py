"""The tool registry service, `ctx.tools`: registration, lookup, guards, and the pipeline.

Owns: the tool table (one global layer), the guard table (monotonic, live-iterated within a
generation), `register`/`get`/`schemas`/`guard`/`execute`/`execution_mode`, and the staged API
the agent loop drives (`prepare`/`dispatch`/`finalize`/`finish`, inherited from
`tether.tools.pipeline`). Registrations made through a plugin's context belong to that plugin and
are undone when it is disposed. Mounting the service provides `ctx.tools` and nothing else: no
tools, listeners, guards or approval service.

Presentation modes (spec §8.1, config `mode`): `native` (the default) sends every visible
schema but `run_code`; `code` sends only `run_code` and refuses a model-direct call (no `parent`)
to any other visible tool with `UNKNOWN_TOOL` and the route message; `both` sends everything.
`run_code` itself is registered by the Code Mode plugin (`tether.plugins.code_mode`).

Not yet here (see the README's roadmap): agent-scoped layers and `restrict()`; every call sees
the global layer.

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

import logging
import math
from collections.abc import Callable
from typing import ClassVar, Final, Literal

from pydantic import BaseModel, ConfigDict

from ..core.errors import HarnessError
from ..core.json import JsonValue, NotLosslessJson, snapshot, thaw
from ..core.timeout import format_ms
from ..kernel import Context, Service
from .definition import ToolDefinition, ToolOutput, timeout_too_long
from .execution import Call, ToolExecution, ToolExecutionInput
from .pipeline import Pipeline
from .results import ToolExecutionResult, failure_from

__all__ = ["RUN_CODE", "PresentationMode", "ToolGuard", "ToolRuntime", "ToolsConfig"]

RUN_CODE: Final = "run_code"
"""The Code Mode transport tool: never bound inside programs; the only tool in `code` mode."""

PresentationMode = Literal["native", "code", "both"]


class ToolsConfig(BaseModel):
    """`ctx.tools` config: `mode` is the presentation mode (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: PresentationMode = "native"


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

ToolGuard = Callable[[ToolExecution], "str | None"]


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


class ToolRuntime(Service, Pipeline):
    """`ctx.tools`. Mount with `await ctx.plugin(ToolRuntime)`."""

    name: ClassVar[str] = "tools"
    Config: ClassVar[type[ToolsConfig]] = ToolsConfig

    def __init__(self, ctx: Context, config: object = None) -> None:
        self.mode: PresentationMode = config.mode if isinstance(config, ToolsConfig) else "native"
        if self.mode == "code":  # only then: the native path keeps its plain `_create`
            self._create = self._create_code_only  # type: ignore[method-assign]
        self._ctx = ctx
        self._bus = ctx
        self._table = ctx._listeners
        self._tools: dict[str, ToolDefinition] = {}
        self._lookup = self._tools.get
        self._schemas: dict[int, tuple[ToolDefinition, JsonValue]] = {}
        self._guards: list[ToolGuard | None] = []
        self._live_guards = 0
        self._timeout_policies = 0
        self._unpoliced: set[str] = set()
        """Tools with `timeout_ms` registered while no timeout policy was declared, not yet
        called; while non-empty, lookups go through `_lookup_checking`."""
        self._warned: set[str] = set()

    def __tether_bind__(self, ctx: Context) -> ToolsView:
        return ToolsView(self, ctx)

    # -- the registry --------------------------------------------------------------------------

    def register(
        self, definition: ToolDefinition, *, owner: Context | None = None
    ) -> Callable[[], None]:
        """Add a tool; returns its disposer (also run when the owning plugin is disposed).

        Raises `TypeError`/`ValueError` for a malformed definition and `ValueError` for a name
        that is taken. If a `tools/change` listener raises, the registration is rolled back and
        the error propagates.
        """
        _check_definition(definition)
        name = definition.name
        if name in self._tools:
            raise ValueError(
                f'tool "{name}" is already registered (for a per-agent variant, register '
                "through that agent's context instead)"
            )
        self._tools[name] = definition
        try:
            self._ctx.emit("tools/change")
        except BaseException:
            del self._tools[name]
            raise
        if definition.timeout_ms is not None and not self._timeout_policies:
            self._unpoliced.add(name)
            self._lookup = self._lookup_checking

        def unregister() -> None:
            if self._tools.get(name) is definition:
                del self._tools[name]
                self._schemas.pop(id(definition), None)
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
        """The definition visible to `agent` (or to everyone), or None."""
        return self._tools.get(name)

    def _visible(self, name: str, agent: object | None) -> ToolDefinition | None:
        if self._unpoliced and name in self._unpoliced:
            self._first_call_unpoliced(name)
        return self._tools.get(name)

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
        if name in self._unpoliced:
            self._first_call_unpoliced(name)
        return self._tools.get(name)

    def _first_call_unpoliced(self, name: str) -> None:
        self._unpoliced.discard(name)
        if not self._unpoliced:
            self._lookup = self._tools.get
        definition = self._tools.get(name)
        if definition is None or definition.timeout_ms is None or name in self._warned:
            return
        self._warned.add(name)
        _log.warning(
            'tool "%s" declares timeout_ms=%s, but no timeout policy is mounted, so the budget '
            "does nothing; mount tether.plugins.timeout_policy",
            name,
            format_ms(definition.timeout_ms),
        )

    def names(self, agent: object | None = None) -> list[str]:
        """Visible tool names, in registration order."""
        return list(self._tools)

    def schemas(self, agent: object | None = None) -> list[dict[str, JsonValue]]:
        """`{"name", "description", "parameters"}` per tool the model is sent, in registration
        order; a fresh deep copy each time. Never a callback, `timeout_ms` or output schema.
        Which tools depends on the presentation mode (see the module docstring)."""
        out: list[dict[str, JsonValue]] = []
        mode = self.mode
        for defn in self._tools.values():
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

    def _create_code_only(
        self, input: ToolExecutionInput
    ) -> tuple[Call, ToolExecutionResult | None]:
        """`_create` under `code` mode (spec tool-runtime §1.1 step 9): a model-direct call to a
        visible tool other than `run_code` ends here, before any policy stage."""
        call, early = Pipeline._create(self, input)
        if early is not None or call.parent is not None or call.name == RUN_CODE:
            return call, early
        if self._visible(call.name, call.agent) is None:
            return call, None
        call.finalizer = None
        return call, failure_from(_CodeOnlyRoute(call.name))

    # -- guards --------------------------------------------------------------------------------

    def guard(self, fn: ToolGuard, *, owner: Context | None = None) -> Callable[[], None]:
        """Add a synchronous guard: a returned string denies the call (monotonic: nothing can
        undo it). Evaluated only for allowed calls, in registration order."""
        table = self._guards
        table.append(fn)
        index = len(table) - 1
        self._live_guards += 1

        def remove() -> None:
            if index < len(table) and table is self._guards and table[index] is fn:
                table[index] = None
                self._live_guards -= 1
                if self._live_guards == 0:
                    self._guards = []  # a drained table starts a new generation

        if owner is not None:
            return owner.effect(remove)
        return remove

    def _deny_by_guard(self, call: Call) -> str | None:
        exec = call.view
        table = self._guards
        i = 0
        while i < len(table):
            fn = table[i]
            i += 1
            if fn is None:
                continue
            verdict = fn(exec)
            if verdict is not None:
                if not isinstance(verdict, str):
                    raise TypeError(
                        f"a guard returns a denial reason (str) or None; got {verdict!r}"
                    )
                return verdict
        return None

    # -- scheduling ----------------------------------------------------------------------------

    def execution_mode(self, input: ToolExecutionInput) -> Literal["parallel", "exclusive"]:
        """`parallel` only when the tool's classifier returns exactly `True` for the raw
        arguments; unknown tools, no classifier, anything else or a raise: `exclusive`."""
        defn = self._tools.get(input.name)
        if defn is None or defn.is_concurrency_safe is None:
            return "exclusive"
        try:
            return "parallel" if defn.is_concurrency_safe(input.arguments) is True else "exclusive"
        except Exception:
            return "exclusive"


class ToolsView:
    """`ctx.tools` as seen from one plugin's context: registrations belong to that plugin."""

    __slots__ = (
        "_ctx",
        "_runtime",
        "execute",
        "execution_mode",
        "finish",
        "get",
        "prepare",
        "schemas",
    )

    def __init__(self, runtime: ToolRuntime, ctx: Context) -> None:
        self._runtime = runtime
        self._ctx = ctx
        self.execute = runtime.execute
        self.get = runtime.get
        self.schemas = runtime.schemas
        self.execution_mode = runtime.execution_mode
        self.prepare = runtime.prepare
        self.finish = runtime.finish

    @property
    def runtime(self) -> ToolRuntime:
        """The shared service (the staged scheduler API lives there)."""
        return self._runtime

    def register(self, definition: ToolDefinition) -> Callable[[], None]:
        """See `ToolRuntime.register`; owned by this view's plugin."""
        return self._runtime.register(definition, owner=self._ctx)

    def guard(self, fn: ToolGuard) -> Callable[[], None]:
        """See `ToolRuntime.guard`; owned by this view's plugin."""
        return self._runtime.guard(fn, owner=self._ctx)

    def declare_timeout_policy(self) -> Callable[[], None]:
        """See `ToolRuntime.declare_timeout_policy`; owned by this view's plugin."""
        return self._runtime.declare_timeout_policy(owner=self._ctx)

    def names(self, agent: object | None = None) -> list[str]:
        return self._runtime.names(agent)

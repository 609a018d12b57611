"""Tool definitions: the raw `ToolDefinition`, `ToolOutput`, and the typed authoring helpers.

Owns: what a tool declares (name, description, model-facing parameters, output schema and
rendering, body, `finalize_content`, `timeout_ms`, `is_concurrency_safe`) and the compiled pieces
built once per definition, on first use (the argument validator at the first call, the output
canonicalizer's `TypeAdapter` at the first result: booting defines every tool, most never
run). `define_tool` validates arguments *inside* the body wrapper, so `INVALID_ARGS` happens
after policy and wrappers, exactly where the spec puts it. `@tool` infers a parameters model
from a typed signature. A built-in tool names its argument model with a `ModelRef`: its
model-facing schema comes from `tether.tools.precomputed` (recorded from pydantic), and the
model — and pydantic — is imported at the first validation, so a boot imports neither.

The two layers differ on cancellation (issue 38): a raw `ToolDefinition`/`define_tool` body is
cooperative — never interrupted, it sees only its signal (the seed's contract) — while an async
`@tool` body runs under `signal.cancels()` by default, so an abort or a timeout interrupts what
it awaits (its `finally` runs; the runtime still awaits it), unless `@tool(cooperative=True)`.
"""

from __future__ import annotations

import inspect
import json
import math
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast, get_type_hints, overload

from ..core.json import JsonValue
from ..core.timeout import MAX_TIMER_DELAY_MS
from ..kernel.config_models import is_pydantic_model
from .body import BODY_TASK_PREFIX
from .errors import ToolArgsError
from .execution import ToolExecution, ToolRunContext
from .model_ref import ModelRef
from .precomputed import factory_recorded, precomputed_schema, recorded_schema
from .results import ContentBlock, ToolExecutionResult, text_content
from .schema import ValueCanonicalizer, compile_output_schema, model_facing_schema, violations

if TYPE_CHECKING:  # pydantic is imported by a model's first validation, not by a boot
    from pydantic import BaseModel

__all__ = ["ToolDefinition", "ToolOutput", "define_tool", "render_text", "timeout_too_long", "tool"]

A = TypeVar("A")
F = TypeVar("F", bound=Callable[..., object])

Body = Callable[[Any, ToolRunContext], "Awaitable[object] | object"]
FinalizeContent = Callable[[ToolExecution, ToolExecutionResult], "Sequence[ContentBlock] | None"]


def render_text(_args: object, value: JsonValue) -> Sequence[ContentBlock]:
    """Default rendering: a string value as one text block, anything else as compact JSON."""
    if isinstance(value, str):
        return text_content(value)
    return text_content(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """How a success is canonicalized (`schema`) and shown to the model (`render`)."""

    schema: object = None
    render: Callable[[Any, JsonValue], Sequence[ContentBlock]] = render_text
    presentation_meta: Callable[[Any, JsonValue], JsonValue] | None = None


def _positive_finite(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def timeout_too_long(timeout_ms: float) -> str | None:
    """Why a (positive finite) `timeout_ms` cannot be a timer, or None. Checked at definition
    and registration so that no call of the tool fails for it later."""
    if timeout_ms <= MAX_TIMER_DELAY_MS:
        return None
    shown = int(timeout_ms) if float(timeout_ms).is_integer() else timeout_ms
    days = MAX_TIMER_DELAY_MS / 86_400_000
    return f"timeout_ms must be at most {MAX_TIMER_DELAY_MS} (about {days:.1f} days); got {shown}"


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as the registry stores it. A raw definition's body gets the frozen JSON arguments,
    unvalidated; `define_tool` builds one whose body validates first."""

    name: str
    description: str
    parameters: Mapping[str, object]
    output: ToolOutput
    execute: Body
    finalize_content: FinalizeContent | None = None
    timeout_ms: float | None = None
    is_concurrency_safe: Callable[[Any], bool] | None = None
    check_arguments: Callable[[object], None] | None = field(
        default=None, repr=False, compare=False
    )
    """Raises `ToolArgsError` for arguments the body wrapper would refuse (`define_tool` sets
    it; a raw definition has none). Policies use it to answer a call dispatch would refuse
    anyway without asking anyone; dispatch itself validates in the body wrapper."""
    canonicalize: ValueCanonicalizer = field(init=False, repr=False, compare=False)
    is_async: bool = field(init=False, repr=False, compare=False)
    body_task_prefix: str = field(init=False, repr=False, compare=False)
    """How the name of each body task of this tool begins (`tool <name> `; tools.body)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "body_task_prefix", f"{BODY_TASK_PREFIX}{self.name} ")
        schema = self.output.schema if isinstance(self.output, ToolOutput) else None
        object.__setattr__(self, "canonicalize", compile_output_schema(schema))
        object.__setattr__(
            self,
            "is_async",
            inspect.iscoroutinefunction(self.execute)
            or getattr(self.execute, "__tether_returns_coroutine__", False) is True,
        )


def _frozen_model(model: type[BaseModel]) -> type[BaseModel]:
    """A frozen subclass of the user's model, built once: bodies get immutable arguments."""
    if model.model_config.get("frozen"):
        return model
    from pydantic import ConfigDict

    # built now (the first call), also when the user's model defers its build
    config = ConfigDict(**{**model.model_config, "frozen": True, "defer_build": False})
    return cast("type[BaseModel]", type(model.__name__, (model,), {"model_config": config}))


def _argument_validator(model: type[BaseModel]) -> Callable[[object], object]:
    """The validator of `model`'s frozen subclass, raising `ToolArgsError` with the violations
    (`INVALID_ARGS`); built — pydantic imported — when the first call needs it."""
    from pydantic import ValidationError

    validate_model = _frozen_model(model).__pydantic_validator__.validate_python

    def validated(args: object) -> object:
        try:
            return validate_model(args)
        except ValidationError as exc:
            raise ToolArgsError(violations(exc, "arguments")) from None

    return validated


def define_tool(
    *,
    name: str,
    description: str,
    parameters: type[BaseModel] | ModelRef | Mapping[str, object],
    output: ToolOutput,
    execute: Callable[[A, ToolRunContext], Awaitable[object] | object],
    finalize_content: FinalizeContent | None = None,
    timeout_ms: float | None = None,
    is_concurrency_safe: Callable[[A], bool] | None = None,
) -> ToolDefinition:
    """Define a tool. With a pydantic `parameters` model, the model-facing schema is derived
    from it and arguments are validated inside the body wrapper (`INVALID_ARGS`); the body gets
    the validated, frozen model. A raw JSON-Schema mapping is passed through unvalidated.

    `parameters=ModelRef("package.module:Model")` (or a factory's, `ModelRef("pkg.mod:make",
    (2000,))`) is the same model, imported at the first validation: the schema is the one
    recorded in tether's precomputed table under `ModelRef.key` (the built-in tools' models); a
    reference the table lacks raises ValueError here. A factory recorded for other arguments (a
    non-default configuration) is resolved now and its schema made by pydantic.

    `timeout_ms` is a budget that a timeout policy enforces (mount
    `tether.plugins.timeout_policy`; without one the registry logs a warning at the tool's first
    call and the budget does nothing). The policy only aborts `call.signal`; the body must stop.

    A sync `execute` runs in a worker thread and cannot be interrupted: its `TOOL_TIMEOUT` (or
    `ABORTED`) arrives only when the function returns. Poll `call.signal.aborted` — safe to read
    from any thread — in its loop and return when it is true::

        def crunch(args: Args, call: ToolRunContext) -> int:
            total = 0
            for chunk in chunks(args.path):
                if call.signal.aborted:
                    break  # the result becomes TOOL_TIMEOUT / ABORTED anyway
                total += work(chunk)
            return total

    A body that must stop work it cannot poll (a blocking call) should be async and forward the
    signal to a capability that can stop it."""
    if timeout_ms is not None and not _positive_finite(timeout_ms):
        raise ValueError(f"define_tool({name}): timeout_ms must be a positive finite number")
    too_long = None if timeout_ms is None else timeout_too_long(timeout_ms)
    if too_long is not None:
        raise ValueError(f"define_tool({name}): {too_long}")
    resolve: Callable[[], type[BaseModel]]
    if isinstance(parameters, ModelRef):
        schema, resolve = _referenced(name, parameters)
    elif is_pydantic_model(parameters):  # never imports pydantic to know
        model = cast("type[BaseModel]", parameters)
        schema, resolve = _parameters_schema(model), lambda: model
    else:
        return ToolDefinition(
            name=name,
            description=description,
            parameters=cast(Mapping[str, object], parameters),
            output=output,
            execute=execute,
            finalize_content=finalize_content,
            timeout_ms=timeout_ms,
            is_concurrency_safe=is_concurrency_safe,
        )
    body_is_async = inspect.iscoroutinefunction(execute)
    validated: Callable[[object], object]

    def first_validation(args: object) -> object:
        # The model is resolved and its frozen subclass built for the first call, not here: a
        # boot defines every tool.
        nonlocal validated
        validated = _argument_validator(resolve())
        return validated(args)

    validated = first_validation
    body: Callable[[Any, ToolRunContext], Any] = execute

    def run(args: object, exec: ToolRunContext) -> object:
        # A sync body stays sync: the registry runs it in a worker thread (tools.body), the one
        # path every synchronous body takes, validation included.
        return body(validated(args), exec)

    def start(args: object, exec: ToolRunContext) -> Awaitable[object]:
        # An async body's own coroutine, once its arguments validate: no wrapper coroutine.
        return body(validated(args), exec)  # type: ignore[no-any-return]

    start.__tether_returns_coroutine__ = True  # type: ignore[attr-defined]

    def check_arguments(args: object) -> None:
        validated(args)

    classify: Callable[[Any], bool] | None = None
    if is_concurrency_safe is not None:
        user_classify = is_concurrency_safe

        def classify(args: object) -> bool:
            try:
                valid = validated(args)
            except ToolArgsError:
                return False
            return user_classify(cast(Any, valid)) is True

    return ToolDefinition(
        name=name,
        description=description,
        parameters=schema,
        output=output,
        execute=start if body_is_async else run,
        finalize_content=finalize_content,
        timeout_ms=timeout_ms,
        is_concurrency_safe=classify,
        check_arguments=check_arguments,
    )


def _referenced(
    name: str, ref: ModelRef
) -> tuple[dict[str, object], Callable[[], type[BaseModel]]]:
    """A reference's recorded schema and its (deferred) resolution; a factory recorded only
    for other arguments is resolved now and its schema made by pydantic; anything else the
    table lacks is refused here, never at the first call."""
    recorded = recorded_schema(ref.key)
    if recorded is not None:
        return recorded, ref.resolve
    if ref.factory is not None and factory_recorded(ref.factory):
        model = ref.resolve()  # a configured variant: built now, as a model class would be
        return model_facing_schema(model), lambda: model
    raise ValueError(
        f"define_tool({name}): parameters {ref.key!r} has no precomputed schema; add the"
        " reference to tether.agent.tool_schemas.argument_refs and run"
        " `python -m tether.agent.tool_schemas`, or pass the model class itself"
    )


def _parameters_schema(model: type[BaseModel]) -> dict[str, object]:
    """The model-facing schema: the precomputed one of a built-in argument model (which then
    stays unbuilt until its first call validates), else pydantic's."""
    recorded = precomputed_schema(model)
    return recorded if recorded is not None else model_facing_schema(model)


def _signature_model(fn: Callable[..., object], name: str) -> tuple[type[BaseModel], str | None]:
    hints = get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    exec_param: str | None = None
    for param in inspect.signature(fn).parameters.values():
        hint = hints.get(param.name, Any)
        if hint is ToolRunContext:
            exec_param = param.name
            continue
        if param.name == "exec":  # the old, name-based way: shadows the builtin
            warnings.warn(
                f"@tool({name}): a parameter receives the call by its type, not by the name"
                ' "exec": annotate it `ToolRunContext` (any name, e.g. `call: ToolRunContext`);'
                " the untyped `exec` parameter will stop working in a later release",
                DeprecationWarning,
                stacklevel=4,
            )
            exec_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"@tool({name}): *args/**kwargs cannot become tool parameters")
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hint, default)
    from pydantic import ConfigDict, create_model  # a typed signature is a pydantic model

    model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return cast("type[BaseModel]", model), exec_param


def _always_concurrent(_args: object) -> bool:
    return True


@overload
def tool(fn: F, /) -> ToolDefinition: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    output: ToolOutput | None = None,
    finalize_content: FinalizeContent | None = None,
    timeout_ms: float | None = None,
    is_concurrency_safe: Callable[[Any], bool] | None = None,
    concurrent: bool = False,
    cooperative: bool = False,
) -> Callable[[F], ToolDefinition]: ...
def tool(
    fn: F | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    output: ToolOutput | None = None,
    finalize_content: FinalizeContent | None = None,
    timeout_ms: float | None = None,
    is_concurrency_safe: Callable[[Any], bool] | None = None,
    concurrent: bool = False,
    cooperative: bool = False,
) -> ToolDefinition | Callable[[F], ToolDefinition]:
    """Decorator sugar over `define_tool`: parameters come from the function's typed signature
    (a parameter typed `ToolRunContext`, of any name, receives the execution; an untyped one
    named `exec` still does, with a DeprecationWarning); the
    description defaults to the docstring; the output schema to the return annotation.

    Cancellation: an `async def` body runs under its signal's `cancels()` scope, so an abort
    (the caller's cancel, `timeout_ms`) interrupts whatever it awaits with `CancelledError`; its
    `finally` blocks run and the runtime still waits for it to return (the call ends `ABORTED`
    or `TOOL_TIMEOUT`). `cooperative=True` opts out: the body is never interrupted and stops
    itself by watching `call.signal` (the raw `define_tool` contract). A plain `def` body runs
    in a worker thread and cannot be interrupted: it should poll `call.signal.aborted`.

    Concurrency: by default every call is exclusive: the agent runs a step's calls in the
    model's order and an exclusive call runs alone (the calls before it finish first, the ones
    after it wait). `concurrent=True` makes every call of the tool concurrency-safe: it runs
    beside the step's other concurrency-safe calls (at most `max_parallel_tool_calls` at once);
    `is_concurrency_safe=predicate` decides per call from its validated arguments.
    """
    if concurrent and is_concurrency_safe is not None:
        raise TypeError(
            "@tool: pass either concurrent=True or is_concurrency_safe=..., not both"
            " (concurrent=True means every call is concurrency-safe)"
        )
    classify: Callable[[Any], bool] | None = (
        _always_concurrent if concurrent else is_concurrency_safe
    )

    def build(f: F) -> ToolDefinition:
        tool_name = name or f.__name__
        model, exec_param = _signature_model(f, tool_name)
        out = output
        if out is None:
            ret = get_type_hints(f).get("return")
            out = ToolOutput(schema=None if ret in (None, type(None), Any) else ret)
        fields = tuple(model.model_fields)

        def keywords(args: BaseModel, exec: ToolRunContext) -> dict[str, object]:
            kwargs = {k: getattr(args, k) for k in fields}
            if exec_param is not None:
                kwargs[exec_param] = exec
            return kwargs

        call: Callable[[BaseModel, ToolRunContext], object]
        if inspect.iscoroutinefunction(f):
            fn_async = cast(Callable[..., Awaitable[object]], f)

            async def call_async(args: BaseModel, exec: ToolRunContext) -> object:
                return await fn_async(**keywords(args, exec))

            async def call_cancellable(args: BaseModel, exec: ToolRunContext) -> object:
                async with exec.signal.cancels():
                    return await fn_async(**keywords(args, exec))

            call = call_async if cooperative else call_cancellable
        else:

            def call_sync(args: BaseModel, exec: ToolRunContext) -> object:
                return f(**keywords(args, exec))  # in the registry's worker thread

            call = call_sync

        return define_tool(
            name=tool_name,
            description=description or inspect.cleandoc(f.__doc__ or tool_name),
            parameters=model,
            output=out,
            execute=call,
            finalize_content=finalize_content,
            timeout_ms=timeout_ms,
            is_concurrency_safe=classify,
        )

    if fn is not None:
        return build(fn)
    return build

"""Building and freezing outcomes: canonical successes, normalization, decision application.

Owns: `canonical_success` (value → frozen canonical success owned by one execution),
`materialize` (lossless snapshot + freeze of any candidate result), `normalize` (what a
`tools/execute` waterfall returned), `apply_post_decision` (spec §1.12) and
`supersede` (the cancellation replacement of a success). Pure functions over records: the
pipeline decides when each runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Final

from ..core.json import FrozenList, JsonValue, NotLosslessJson, snapshot
from .decisions import MISSING, Accept, Block
from .definition import ToolDefinition, render_text
from .errors import ToolOutputError
from .execution import Call
from .results import (
    ContentBlock,
    ErrorDetail,
    ErrorInfo,
    ToolExecutionResult,
    ToolFailure,
    ToolSuccess,
    UserMessage,
    aborted_before_dispatch_result,
    aborted_result,
    canonical_success_record,
    freeze_content,
    freeze_source,
    text_content,
)

__all__ = [
    "apply_post_decision",
    "canonical_success",
    "materialize",
    "normalize",
    "supersede",
    "with_content",
    "with_contexts",
    "with_deferred",
]

_RESULT_NOT_JSON: Final = "tool result must be losslessly JSON-serializable"


def _projection(tool_name: str, what: str, produce: Callable[[], object]) -> JsonValue:
    try:
        produced = produce()
    except Exception as exc:
        raise ToolOutputError(tool_name, [f"{what} failed: {_message(exc)}"]) from None
    try:
        return snapshot(list(produced) if isinstance(produced, tuple) else produced)
    except NotLosslessJson:
        raise ToolOutputError(tool_name, [f"{what} returned non-lossless JSON"]) from None


def _message(exc: BaseException) -> str:
    from ..core.errors import error_message

    return error_message(exc)


def canonical_success(tool: ToolDefinition, call: Call, value: object) -> ToolSuccess:
    """Validate `value` against the tool's output schema, freeze it, render it (spec §1.10)."""
    output = tool.output
    if output.schema is str and type(value) is str:  # already canonical (schema.py's shortcut)
        canonical: JsonValue = value
    else:
        canonical = tool.canonicalize(tool.name, value)
    args = call.arguments
    render = output.render
    try:
        if render is render_text and type(canonical) is str:
            rendered: object = text_content(canonical)  # what render_text does, one call less
        else:
            rendered = render(args, canonical)
    except Exception as exc:
        raise ToolOutputError(tool.name, [f"output.render failed: {_message(exc)}"]) from None
    if type(rendered) is FrozenList:  # built frozen (text_content): lossless by construction
        content: JsonValue = rendered
    else:
        content = _projection(tool.name, "output.render", lambda: rendered)
        if not isinstance(content, list):
            raise ToolOutputError(tool.name, ["output.render must return a list of content blocks"])
    meta: JsonValue | None = None
    present = output.presentation_meta
    if present is not None and call.parent is None:
        meta = _projection(tool.name, "output.presentation_meta", lambda: present(args, canonical))
    return canonical_success_record(
        canonical,
        content,  # type: ignore[arg-type]
        meta,
        call.concluded,
        call.token,
    )


def _frozen_contexts(contexts: Sequence[UserMessage]) -> tuple[UserMessage, ...]:
    if contexts == ():
        return ()
    if isinstance(contexts, tuple) and all(
        isinstance(c, UserMessage) and isinstance(c.content, FrozenList) for c in contexts
    ):
        return contexts
    out = []
    for c in contexts:
        if not isinstance(c, UserMessage):
            raise TypeError(
                f"additional_contexts must hold UserMessage values; got {type(c).__name__}"
            )
        out.append(
            UserMessage(
                id=c.id,
                content=freeze_content(c.content),
                source=freeze_source(c.source),
            )
        )
    return tuple(out)


def materialize(result: object) -> ToolExecutionResult:
    """A lossless, deep-frozen copy of a candidate result (the same object when it already is).

    Raises `TypeError("tool result must be losslessly JSON-serializable")` otherwise.
    """
    if isinstance(result, ToolFailure):
        _check_error(result.error)
    elif not isinstance(result, ToolSuccess):
        raise TypeError(
            f"a tool result must be a ToolSuccess or ToolFailure; got {type(result).__name__}"
        )
    try:
        content = freeze_content(result.content)
        meta = None if result.meta is None else snapshot(result.meta)
        contexts = _frozen_contexts(result.additional_contexts)
    except NotLosslessJson:
        raise TypeError(_RESULT_NOT_JSON) from None
    if content is result.content and meta is result.meta and contexts is result.additional_contexts:
        return result
    return _copy(result, content=content, meta=meta, additional_contexts=contexts)


def _check_error(error: object) -> None:
    if not isinstance(error, ErrorDetail) or not isinstance(error.message, str):
        raise TypeError("a ToolFailure's error must be an ErrorDetail with a str message")
    info = error.info
    if info is not None and not (
        isinstance(info, ErrorInfo) and isinstance(info.name, str) and isinstance(info.code, str)
    ):
        raise TypeError("ErrorDetail.info must be an ErrorInfo(name: str, code: str)")


def normalize(
    call: Call, result: object, resolve: Callable[[Call], ToolDefinition]
) -> ToolExecutionResult:
    """Spec §1.11: a canonical success of this call stands; a failure is copied; any other
    success is rebuilt from its `value` against the tool as it is now (authored content ignored)."""
    if isinstance(result, ToolSuccess):
        if result._owner is call.token:
            return result
        rebuilt = canonical_success(resolve(call), call, result.value)
        if result.additional_contexts:
            return with_contexts(rebuilt, result.additional_contexts)
        return rebuilt
    return materialize(result)


def with_contexts(
    result: ToolExecutionResult, contexts: Sequence[UserMessage]
) -> ToolExecutionResult:
    """A copy of `result` whose `additional_contexts` are `contexts` (ownership kept)."""
    return _copy(result, additional_contexts=_frozen_contexts(contexts))


def _copy(result: ToolExecutionResult, **changes: object) -> ToolExecutionResult:
    """`dataclasses.replace` that keeps a canonical success's owner (a non-init field)."""
    out = replace(result, **changes)  # type: ignore[arg-type]
    if isinstance(result, ToolSuccess):
        object.__setattr__(out, "_owner", result._owner)
    return out


def with_content(result: ToolExecutionResult, content: object) -> ToolExecutionResult:
    """`result` with only its content replaced (what `finalize_content` may change), frozen."""
    return materialize(_copy(result, content=content))


def with_deferred(call: Call, result: ToolExecutionResult) -> ToolExecutionResult:
    """`result` with the body's deferred contexts in front of its own (spec §1.11 step 2)."""
    deferred = call.deferred
    if not deferred:
        return result
    return with_contexts(result, (*deferred, *result.additional_contexts))


def supersede(call: Call, result: ToolExecutionResult) -> ToolExecutionResult:
    """Cancellation replaces only successes: `ABORTED` after the body ran, else
    `ABORTED_BEFORE_DISPATCH`; the success's contexts ride along."""
    if result.is_error:
        return result
    contexts = result.additional_contexts
    if call.body_invoked:
        return aborted_result(contexts)
    return aborted_before_dispatch_result(contexts)


def _feedback_text(feedback: Sequence[ContentBlock]) -> str:
    parts = []
    for block in feedback:
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(str(block["text"]))
        else:
            parts.append(f"[{block.get('type')} content]")
    return "\n".join(parts) or "tool result blocked by post-execute policy"


def apply_post_decision(
    call: Call,
    result: ToolExecutionResult,
    decision: object,
    resolve: Callable[[Call], ToolDefinition],
) -> ToolExecutionResult:
    """Spec §1.12, failing closed on anything that is not an `Accept` or a `Block`.

    Raises `TypeError("tool result must be losslessly JSON-serializable")` when the decision's
    content, feedback or contexts are not JSON (the text finish would give them).
    """
    try:
        return _apply_post_decision(call, result, decision, resolve)
    except NotLosslessJson:
        raise TypeError(_RESULT_NOT_JSON) from None


def _apply_post_decision(
    call: Call,
    result: ToolExecutionResult,
    decision: object,
    resolve: Callable[[Call], ToolDefinition],
) -> ToolExecutionResult:
    if isinstance(decision, Block):
        feedback = freeze_content(decision.feedback)
        return ToolFailure(
            error=ErrorDetail(_feedback_text(feedback)),
            content=feedback,
            additional_contexts=_frozen_contexts(decision.additional_contexts),
        )
    if not isinstance(decision, Accept):
        raise TypeError(
            f"tools/post-execute must decide Accept(...) or Block(...); "
            f"got {type(decision).__name__}"
        )
    if decision.content is not MISSING and decision.value is not MISSING:
        raise TypeError("tools/post-execute accept decision cannot replace both value and content")
    contexts = (*result.additional_contexts, *decision.additional_contexts)
    if decision.value is not MISSING:
        if result.is_error:
            raise TypeError("tools/post-execute cannot replace the value of a failed result")
        rebuilt = canonical_success(resolve(call), call, decision.value)
        return with_contexts(rebuilt, contexts) if contexts else rebuilt
    out = result
    if decision.content is not MISSING and decision.content is not None:
        out = _copy(out, content=freeze_content(decision.content))
    if decision.additional_contexts:
        out = with_contexts(out, contexts)
    return out

"""The spill policy (spec capabilities §1.6.8): big plain-text tool results leave the context and
the durable log as a preview plus where the full text is.

Owns: when a result is spilled, the preview (head and tail of the text around `\\n...\\n`, then a
blank line and `(Omitted <N> bytes. Full formatted result stored at: <locator>. <hint>)`, the
whole at most `max_inline_bytes` UTF-8 bytes), and its two listeners. Does not own storing the
text (`ctx.spill_store` when something provides one, else `LocalSpillStore`: beside the session).

Listeners:
  * `tools/post-execute`, prepended: after the rest of the waterfall has decided, an accepted
    result whose content is plain text only (every block `{"type": "text", "text": ...}`; the
    texts joined by newlines), from a tool other than `read`, not nested (no `parent`), not a
    value replacement, and over `max_inline_bytes` is saved and its content replaced by the
    preview. What the model sees is bounded; `value` stays the tool's.
  * `tools/code-dispatch-log`: the same rule bounds the durable copy of a Code Mode sub-call
    result (`tool/code-dispatch` events); what the program received is untouched.
In every other case — the notice alone does not fit, there is no session owner, storing fails —
the original is kept (a failure to store is logged at WARNING on `tether.spill`).

Config: `max_inline_bytes` (default 50000, the shipped value; `null` disables the policy).
Mount: `await ctx.plugin(tether.plugins.spill.policy, {"max_inline_bytes": 50000})`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Annotated, ClassVar, Final

from ...core.errors import error_message
from ...kernel import Context
from ...kernel.config_models import ConfigValue
from ...tools.decisions import MISSING, Accept, PostToolDecision
from ...tools.events import CODE_DISPATCH_LOG
from ...tools.execution import ToolExecution
from ...tools.results import ContentBlock, ToolExecutionResult, text_content

if TYPE_CHECKING:  # resolved where a config is validated (tether.kernel.config_models)
    from pydantic import Field

    from ...tools.code_dispatch import CodeDispatchLog  # a Code Mode sub-call's (issue 36)
    from .store import Spilled, SpillStore  # imported by the first spill (issue 36)

__all__ = ["Config", "SpillPolicyConfig", "apply", "bounded_text", "inject", "name", "plain_text"]

name: Final = "spill-policy"
inject: Final = ("tools",)

_ELISION: Final = "\n...\n"
_GAP: Final = "\n\n"
_EXEMPT: Final = frozenset({"read"})

_log = logging.getLogger("tether.spill")


class SpillPolicyConfig(ConfigValue):
    """See the module docstring."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models

    max_inline_bytes: Annotated[int | None, Field(ge=1)] = 50_000


Config = SpillPolicyConfig


def plain_text(content: Sequence[ContentBlock]) -> str | None:
    """The text of content made only of text blocks (joined by newlines), else None."""
    if not content:
        return None
    texts: list[str] = []
    for block in content:
        text = block.get("text")
        if block.get("type") != "text" or not isinstance(text, str):
            return None
        texts.append(text)
    return "\n".join(texts)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _notice(omitted: int, locator: str, hint: str) -> str:
    return f"(Omitted {omitted} bytes. Full formatted result stored at: {locator}. {hint})"


def _fixed_bytes(total: int, spilled: Spilled) -> int:
    """The bytes of the replacement that are not preview (the notice's count at its widest)."""
    notice = _notice(total, spilled.locator, spilled.retrieval_hint)
    return len(_utf8(notice)) + len(_GAP) + len(_ELISION)


def bounded_text(text: str, cap: int, spilled: Spilled) -> str | None:
    """The replacement for `text` (see the module note), or None when even the notice does not
    fit in `cap` bytes. Cuts fall on character boundaries."""
    data = _utf8(text)
    total = len(data)
    budget = cap - _fixed_bytes(total, spilled)
    if budget < 0:
        return None
    head_end = _char_start(data, budget - budget // 2, forward=False)
    tail_start = max(_char_start(data, total - budget // 2, forward=True), head_end)
    omitted = tail_start - head_end
    head = data[:head_end].decode("utf-8", "surrogatepass")
    tail = data[tail_start:].decode("utf-8", "surrogatepass")
    notice = _notice(omitted, spilled.locator, spilled.retrieval_hint)
    return f"{head}{_ELISION}{tail}{_GAP}{notice}"


def _char_start(data: bytes, index: int, *, forward: bool) -> int:
    """`index` moved to the start of a character (past or back over UTF-8 continuation bytes),
    so a head cut never grows and a tail cut never starts earlier."""
    index = max(0, min(index, len(data)))
    step = 1 if forward else -1
    while 0 < index < len(data) and data[index] & 0xC0 == 0x80:
        index += step
    return index


def apply(ctx: Context, config: SpillPolicyConfig) -> None:
    """Register the two listeners (undone when this plugin is disposed); nothing when disabled."""
    cap = config.max_inline_bytes
    if cap is None:
        return

    def spill(owner: object | None, key: str, text: str, tool: str) -> str | None:
        """The bounded text, or None to keep the original."""
        assert cap is not None
        if len(_utf8(text)) <= cap or cap < len(_GAP) + len(_ELISION) + len(_notice(0, "", "")):
            return None
        from .store import LocalSpillStore, NoSpillOwner  # at the first spill (issue 36)

        provided: SpillStore | None = ctx.get("spill_store")  # type: ignore[assignment]
        store = provided if provided is not None else LocalSpillStore()
        try:
            spilled = store.save(owner, key, text)
        except NoSpillOwner:
            return None
        except Exception as exc:
            _log.warning(
                'tool "%s" (%s): the full result could not be stored, so it is kept inline: %s',
                tool,
                key,
                error_message(exc),
            )
            return None
        return bounded_text(text, cap, spilled)

    async def bound_result(
        exec: ToolExecution,
        result: ToolExecutionResult,
        next: Callable[[], Awaitable[PostToolDecision]],
    ) -> PostToolDecision:
        decision = await next()
        if (
            not isinstance(decision, Accept)
            or decision.value is not MISSING
            or exec.parent is not None
            or exec.name in _EXEMPT
        ):
            return decision
        content = decision.content
        if content is MISSING or content is None:
            content = result.content
        text = plain_text(content)
        if text is None:
            return decision
        replaced = spill(exec.agent, exec.call_id, text, exec.name)
        if replaced is None:
            return decision
        return Accept(
            content=text_content(replaced), additional_contexts=decision.additional_contexts
        )

    async def bound_logged(
        dispatch: CodeDispatchLog, next: Callable[[], Awaitable[Sequence[ContentBlock]]]
    ) -> Sequence[ContentBlock]:
        content = await next()
        if dispatch.name in _EXEMPT:
            return content
        text = plain_text(content)
        if text is None:
            return content
        replaced = spill(dispatch.agent, dispatch.sub_call_id, text, dispatch.name)
        return content if replaced is None else text_content(replaced)

    ctx.on("tools/post-execute", bound_result, prepend=True)
    ctx.on(CODE_DISPATCH_LOG, bound_logged)

"""Assembling stream chunks into an assistant message's blocks (the one canonical assembler).

Owns `BlockAssembler` (spec §1.5): blocks are ordered by first-seen index;
`block-end` is authoritative and freezes its block (later deltas for that index are ignored);
delta-only streams are tolerated (a tool call without an id gets `call-<index>`); a `max-tokens`
finish drops every tool-call block (truncated calls must not run); a stream without a finish reads
as `stop`; chunks after the finish are ignored. `interrupted_blocks()` (for a cancelled stream)
keeps only text/reasoning blocks with non-whitespace text.
"""

from __future__ import annotations

from typing import Final

from .messages import (
    AssistantBlock,
    AssistantMessage,
    BlockEnd,
    BlockStart,
    BlockType,
    Finish,
    ReasoningBlock,
    ReasoningDelta,
    StreamChunk,
    TextBlock,
    TextDelta,
    TokenUsage,
    ToolCallBlock,
    ToolCallDelta,
    UsageChunk,
    assistant_message,
)

__all__ = ["BlockAssembler"]


class _Slot:
    __slots__ = ("args", "block", "id", "kind", "name", "parts")

    def __init__(self, kind: BlockType) -> None:
        self.kind: BlockType = kind
        self.parts: list[str] = []  # text/reasoning text, or tool-call argument fragments
        self.id = ""
        self.name = ""
        self.block: AssistantBlock | None = None  # set by block-end: frozen from then on

    def build(self, index: int) -> AssistantBlock:
        if self.block is not None:
            return self.block
        text = "".join(self.parts)
        if self.kind == "text":
            return TextBlock(text)
        if self.kind == "reasoning":
            return ReasoningBlock(text)
        return ToolCallBlock(self.id or f"call-{index}", self.name, text)


_KIND_OF_BLOCK: Final[dict[type, BlockType]] = {
    TextBlock: "text",
    ReasoningBlock: "reasoning",
    ToolCallBlock: "tool-call",
}


class BlockAssembler:
    """Builds the assistant message from a chunk stream (the one canonical algorithm)."""

    __slots__ = ("_finish", "_slots", "_usage")

    def __init__(self) -> None:
        self._slots: dict[int, _Slot] = {}  # insertion order = first-seen order
        self._finish: Finish | None = None
        self._usage: TokenUsage | None = None

    def feed(self, chunk: StreamChunk) -> None:
        """Apply one chunk. Chunks after the finish are ignored."""
        if self._finish is not None:
            return
        match chunk:
            case BlockStart(index=index, block_type=kind):
                self._slot(index, kind)
            case TextDelta(index=index, text=text):
                self._append(index, "text", text)
            case ReasoningDelta(index=index, text=text):
                self._append(index, "reasoning", text)
            case ToolCallDelta():
                slot = self._slot(chunk.index, "tool-call")
                if slot.block is None and slot.kind == "tool-call":
                    slot.id = slot.id or chunk.id
                    slot.name = slot.name or (chunk.name or "")
                    slot.parts.append(chunk.arguments_delta)
            case BlockEnd(index=index, block=block):
                slot = self._slot(index, _KIND_OF_BLOCK[type(block)])
                if slot.block is None:
                    slot.kind = _KIND_OF_BLOCK[type(block)]
                    slot.block = block
            case UsageChunk(usage=usage):
                self._usage = usage
            case Finish():
                self._finish = chunk

    def _slot(self, index: int, kind: BlockType) -> _Slot:
        slot = self._slots.get(index)
        if slot is None:
            slot = self._slots[index] = _Slot(kind)
        return slot

    def _append(self, index: int, kind: BlockType, text: str) -> None:
        slot = self._slot(index, kind)
        if slot.block is None and slot.kind == kind:
            slot.parts.append(text)

    @property
    def finished(self) -> bool:
        """Whether a finish chunk has arrived."""
        return self._finish is not None

    @property
    def finish(self) -> Finish:
        """The finish chunk; `Finish("stop")` when the stream ended without one."""
        return self._finish if self._finish is not None else Finish("stop")

    @property
    def usage(self) -> TokenUsage | None:
        """The last usage chunk, if any."""
        return self._usage

    def blocks(self) -> tuple[AssistantBlock, ...]:
        """The assembled blocks; with a `max-tokens` finish, without any tool call."""
        built = tuple(slot.build(i) for i, slot in self._slots.items())
        if self.finish.kind == "max-tokens":
            return tuple(b for b in built if not isinstance(b, ToolCallBlock))
        return built

    def interrupted_blocks(self) -> tuple[AssistantBlock, ...]:
        """For a cancelled stream: text/reasoning blocks with non-whitespace text, in order."""
        return tuple(
            b
            for i, slot in self._slots.items()
            if not isinstance(b := slot.build(i), ToolCallBlock) and b.text.strip()
        )

    def message(self, *, provider: str, model: str, id: str | None = None) -> AssistantMessage:
        """`blocks()` as an assistant message with model provenance."""
        return assistant_message(self.blocks(), provider=provider, model=model, id=id)

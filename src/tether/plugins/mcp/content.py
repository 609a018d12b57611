"""Mapping an MCP `CallToolResult` (as JSON) to tether content blocks, and back for server mode.

Owns the one table of block shapes:

    MCP                                   tether content block
    {"type": "text", text}                {"type": "text", text}
    {"type": "image", data, mimeType}     {"type": "image", data, mime_type}
    {"type": "audio", data, mimeType}     {"type": "audio", data, mime_type}
    {"type": "resource", resource: {uri, mimeType?, text | blob}}
                                          {"type": "resource", uri, mime_type?, text | blob}
    {"type": "resource_link", uri, name}  {"type": "resource_link", uri, name, mime_type?}

Anything else becomes a text block describing what was dropped, never an exception. Works on
plain JSON (`model_dump(mode="json", by_alias=True)`), so it imports nothing from the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...core.json import JsonValue

__all__ = ["from_mcp", "text_of", "to_mcp"]


def from_mcp(blocks: Sequence[Mapping[str, Any]]) -> list[dict[str, JsonValue]]:
    """tether content blocks for the `content` of an MCP result."""
    return [_one(block) for block in blocks]


def _one(block: Mapping[str, Any]) -> dict[str, JsonValue]:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind in ("image", "audio"):
        return {"type": kind, "data": str(block.get("data", "")), "mime_type": _mime(block)}
    if kind == "resource":
        resource = block.get("resource") or {}
        out: dict[str, JsonValue] = {"type": "resource", "uri": str(resource.get("uri", ""))}
        if resource.get("mimeType") is not None:
            out["mime_type"] = str(resource["mimeType"])
        if "text" in resource:
            out["text"] = str(resource["text"])
        elif "blob" in resource:
            out["blob"] = str(resource["blob"])
        return out
    if kind == "resource_link":
        link: dict[str, JsonValue] = {
            "type": "resource_link",
            "uri": str(block.get("uri", "")),
            "name": str(block.get("name", "")),
        }
        if block.get("mimeType") is not None:
            link["mime_type"] = str(block["mimeType"])
        return link
    return {"type": "text", "text": f"[unsupported MCP content block of type {kind!r} omitted]"}


def _mime(block: Mapping[str, Any]) -> str:
    return str(block.get("mimeType") or "application/octet-stream")


def text_of(blocks: Sequence[Mapping[str, Any]]) -> str:
    """The text of an MCP error result: its text blocks joined by newlines."""
    texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
    return "\n".join(text for text in texts if text) or "the MCP tool reported an error"


def to_mcp(blocks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """MCP content (JSON) for tether content blocks (server mode)."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            out.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind in ("image", "audio"):
            mime = str(block.get("mime_type") or "application/octet-stream")
            out.append({"type": kind, "data": str(block.get("data", "")), "mimeType": mime})
        elif kind == "resource":
            resource: dict[str, Any] = {"uri": str(block.get("uri", ""))}
            if block.get("mime_type") is not None:
                resource["mimeType"] = str(block["mime_type"])
            if "text" in block:
                resource["text"] = str(block["text"])
            else:
                resource["blob"] = str(block.get("blob", ""))
            out.append({"type": "resource", "resource": resource})
        elif kind == "resource_link":
            link = {"type": "resource_link", "uri": str(block.get("uri", ""))}
            link["name"] = str(block.get("name", ""))
            out.append(link)
        else:
            out.append({"type": "text", "text": f"[{kind} content omitted]"})
    return out

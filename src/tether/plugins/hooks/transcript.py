"""The Claude Code-format transcript of a session, the file hooks get as `transcript_path`.

Owns `ClaudeTranscript`: `transcript.jsonl` beside the session's `session.jsonl`, one JSON object
per history message, in Claude Code's shape, so hook scripts written for Claude Code read it
unchanged (`jq 'select(.type == "assistant") | .message.content[]'`):

    {"type": "user", "message": {"role": "user", "content": "<prompt>"}, ...}
    {"type": "assistant", "message": {"id", "type": "message", "role": "assistant", "model",
     "content": [{"type": "text", "text"}, {"type": "thinking", "thinking"},
                 {"type": "tool_use", "id", "name": "<Claude Code name>", "input": {...}}],
     "stop_reason": "end_turn" | "tool_use", "usage"?}, ...}
    {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result",
     "tool_use_id", "content": "<text>", "is_error"}]}, ...}

Lines are compact JSON, as Claude Code writes them (`{"parentUuid":null,…,"message":{…,
"role":"assistant",…}}`): scripts grep for `"role":"assistant"` before they parse. Every line
also has `uuid` (stable: derived from the session id and the event's seq),
`parentUuid` (the previous line's), `sessionId`, `timestamp` (ISO 8601 UTC), `cwd`,
`isSidechain: false`, `userType: "external"`, `version` (tether's), and `tetherSeq`, the session
event it mirrors. A user prompt that is only text has string content, as Claude Code writes it;
context a plugin injected (hook output, tool contexts) is a user line with `isMeta: true`.

`sync(session)` appends the lines for the session events not mirrored yet and fsyncs the file;
the hook bridge calls it before every hook runs, so a hook always reads the session so far. The
file is only ever appended to: a resumed session continues after the last `tetherSeq` found in
it (a torn last line, from a crash mid-write, is cut first).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from ...core.json import JsonValue
from .names import ToolNames, claude_tool_input

__all__ = ["TRANSCRIPT_NAME", "ClaudeTranscript", "transcript_lines"]

TRANSCRIPT_NAME: Final = "transcript.jsonl"

_NAMESPACE: Final = uuid.UUID("6f1c8e0e-7a51-4d0f-9a43-3c1b7e2f5d10")


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("tether")
    except Exception:
        return "0"


def _iso(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _text_only(blocks: Sequence[JsonValue]) -> str | None:
    texts = []
    for block in blocks:
        if not isinstance(block, Mapping) or block.get("type") != "text":
            return None
        texts.append(str(block.get("text", "")))
    return "".join(texts)


def _claude_blocks(blocks: Sequence[JsonValue]) -> list[JsonValue]:
    """Tether user/tool content blocks as Anthropic content blocks (text and images)."""
    out: list[JsonValue] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text":
            out.append({"type": "text", "text": str(block.get("text", ""))})
        elif block.get("type") == "image":
            source: dict[str, JsonValue] = {"type": "base64"}
            if isinstance(media := block.get("mime_type") or block.get("media_type"), str):
                source["media_type"] = media
            if isinstance(data := block.get("data"), str):
                source["data"] = data
            out.append({"type": "image", "source": source})
    return out


def _arguments(raw: object) -> JsonValue:
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _assistant(data: Mapping[str, JsonValue], names: ToolNames, model: str) -> dict[str, object]:
    message = data.get("message")
    blocks = message.get("content", []) if isinstance(message, Mapping) else []
    content: list[JsonValue] = []
    has_tool_use = False
    for block in blocks if isinstance(blocks, Sequence) else ():
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            content.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "reasoning":
            content.append({"type": "thinking", "thinking": str(block.get("text", ""))})
        elif kind == "tool-call":
            has_tool_use = True
            name = str(block.get("name", ""))
            content.append(
                {
                    "type": "tool_use",
                    "id": str(block.get("id", "")),
                    "name": names.claude_name(name),
                    "input": claude_tool_input(name, _arguments(block.get("arguments"))),
                }
            )
    body: dict[str, object] = {
        "id": str(message.get("id", "")) if isinstance(message, Mapping) else "",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if has_tool_use else "end_turn",
        "stop_sequence": None,
    }
    usage = data.get("usage")
    if isinstance(usage, Mapping):
        body["usage"] = {
            "input_tokens": usage.get("input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0),
            "cache_read_input_tokens": usage.get("cache_read_tokens") or 0,
            "cache_creation_input_tokens": usage.get("cache_write_tokens") or 0,
        }
    return {"type": "assistant", "message": body}


def _tool_result(data: Mapping[str, JsonValue]) -> dict[str, object] | None:
    message = data.get("message")
    blocks = message.get("content", []) if isinstance(message, Mapping) else []
    content: list[JsonValue] = []
    for block in blocks if isinstance(blocks, Sequence) else ():
        if not isinstance(block, Mapping) or block.get("type") != "tool-result":
            continue
        inner = block.get("content")
        inner_blocks = inner if isinstance(inner, Sequence) and not isinstance(inner, str) else ()
        text = _text_only(inner_blocks)
        content.append(
            {
                "type": "tool_result",
                "tool_use_id": str(block.get("call_id", "")),
                "content": text if text is not None else _claude_blocks(inner_blocks),
                "is_error": bool(block.get("is_error", False)),
            }
        )
    if not content:
        return None
    return {"type": "user", "message": {"role": "user", "content": content}}


def _user(data: Mapping[str, JsonValue]) -> dict[str, object]:
    raw = data.get("content")
    blocks: Sequence[JsonValue] = (
        raw if isinstance(raw, Sequence) and not isinstance(raw, str) else ()
    )
    text = _text_only(blocks)
    line: dict[str, object] = {
        "type": "user",
        "message": {
            "role": "user",
            "content": text if text is not None else _claude_blocks(blocks),
        },
    }
    source = data.get("source")
    if isinstance(source, Mapping) and source.get("kind") not in (None, "user"):
        line["isMeta"] = True
    return line


def transcript_lines(
    events: Sequence[object],
    *,
    session_id: str,
    cwd: str,
    model: str = "",
    names: ToolNames | None = None,
    parent: str | None = None,
) -> list[dict[str, object]]:
    """The transcript lines for `events` (session events; others are skipped), chained after
    `parent` (the uuid of the line before them)."""
    tool_names = names or ToolNames()
    version = _version()
    lines: list[dict[str, object]] = []
    for event in events:
        kind = getattr(event, "type", None)
        data = getattr(event, "data", None)
        seq = getattr(event, "seq", None)
        if not isinstance(data, Mapping) or not isinstance(seq, int):
            continue
        if kind == "user/message":
            body: dict[str, object] | None = _user(data)
        elif kind == "assistant/message":
            body = _assistant(data, tool_names, model)
        elif kind == "tool/result":
            body = _tool_result(data)
        else:
            body = None
        if body is None:
            continue
        line_id = str(uuid.uuid5(_NAMESPACE, f"{session_id}:{seq}"))
        moment = getattr(event, "time", 0)
        lines.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": cwd,
                "sessionId": session_id,
                "version": version,
                **body,
                "uuid": line_id,
                "timestamp": _iso(moment if isinstance(moment, int) else 0),
                "tetherSeq": seq,
            }
        )
        parent = line_id
    return lines


_COMPACT: Final = (",", ":")


def _encode(line: Mapping[str, object]) -> bytes:
    """One line as Claude Code writes it: compact JSON (`"role":"assistant"`, no spaces), which
    hook scripts grep for."""
    try:
        return json.dumps(line, ensure_ascii=False, separators=_COMPACT).encode() + b"\n"
    except UnicodeEncodeError:  # a lone surrogate: keep it, escaped
        return json.dumps(line, separators=_COMPACT).encode() + b"\n"


class ClaudeTranscript:
    """The transcript file of one session directory (see the module note)."""

    def __init__(self, path: Path, *, names: ToolNames | None = None) -> None:
        self.path = path
        self._names = names or ToolNames()
        self._next_seq: int | None = None  # None: the file has not been read yet
        self._parent: str | None = None

    def _resume(self) -> None:
        """Find where an existing file left off; cut a torn last line."""
        self._next_seq, self._parent = 0, None
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        end = data.rfind(b"\n") + 1
        if end < len(data):
            with open(self.path, "r+b") as file:
                file.truncate(end)
                os.fsync(file.fileno())
        for raw in reversed(data[:end].splitlines()):
            with contextlib.suppress(ValueError):
                last = json.loads(raw)
                if isinstance(last, dict) and isinstance(last.get("tetherSeq"), int):
                    self._next_seq = last["tetherSeq"] + 1
                    uid = last.get("uuid")
                    self._parent = uid if isinstance(uid, str) else None
                    return

    def sync(self, session: object, *, model: str = "") -> Path:
        """Append the lines for `session`'s events not mirrored yet (fsynced); the path."""
        if self._next_seq is None:
            self._resume()
        events = getattr(session, "events", ())
        start = self._next_seq or 0
        fresh = [e for e in events[start:] if getattr(e, "seq", -1) >= start]
        header = getattr(session, "header", None)
        cwd = getattr(header, "cwd", None)
        lines = transcript_lines(
            fresh,
            session_id=str(getattr(session, "id", "")),
            cwd=cwd if isinstance(cwd, str) else os.getcwd(),
            model=model,
            names=self._names,
            parent=self._parent,
        )
        if fresh:
            self._next_seq = getattr(fresh[-1], "seq", start) + 1
        if lines or not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            payload = b"".join(_encode(line) for line in lines)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
        if lines:
            last_uuid = lines[-1]["uuid"]
            self._parent = last_uuid if isinstance(last_uuid, str) else self._parent
        return self.path

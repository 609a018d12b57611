"""`PostToolUse`'s `tool_response` in Claude Code's per-tool shape, built from a tool's value.

Owns `claude_tool_response`. Scripts copied from Claude Code read these fields:

    Bash   {"stdout", "stderr", "interrupted", "isImage"} (+ "backgroundTaskId" for a
           background start); interrupted: the command was killed at its timeout
    Read   {"type": "text", "file": {"filePath", "content", "numLines", "startLine",
           "totalLines"}}
    Write  {"type": "create" | "update", "filePath", "content", "structuredPatch",
           "originalFile"}
    Edit   {"filePath", "oldString", "newString", "originalFile", "structuredPatch",
           "userModified": false, "replaceAll"}

`structuredPatch` is a list of hunks `{"oldStart", "oldLines", "newStart", "newLines",
"lines": [" ctx", "-old", "+new"]}` (3 lines of context). `filePath` is the path the model gave.
Any other tool's response is its canonical value (an object, as tether's tools return), or the
model-facing text when the value is not an object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...core.json import JsonValue

__all__ = ["claude_tool_response", "structured_patch"]


def structured_patch(before: str, after: str) -> list[JsonValue]:
    """The hunks turning `before` into `after`, as Claude Code's `structuredPatch`."""
    import difflib  # at the first edit, not at boot (issue 36: startup)

    old, new = before.splitlines(), after.splitlines()
    hunks: list[JsonValue] = []
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines: list[JsonValue] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [f" {line}" for line in old[a1:a2]]
                continue
            lines += [f"-{line}" for line in old[a1:a2]]
            lines += [f"+{line}" for line in new[b1:b2]]
        hunks.append(
            {
                "oldStart": i1 + 1 if i2 > i1 else i1,
                "oldLines": i2 - i1,
                "newStart": j1 + 1 if j2 > j1 else j1,
                "newLines": j2 - j1,
                "lines": lines,
            }
        )
    return hunks


def _text(value: object) -> str:
    if isinstance(value, Mapping):
        text = value.get("text")
        return text if isinstance(text, str) else ""
    return value if isinstance(value, str) else ""


def _file_path(arguments: Mapping[str, JsonValue], value: Mapping[str, JsonValue]) -> str:
    given = arguments.get("file_path")
    if isinstance(given, str) and given:
        return given
    path = value.get("path")
    return path if isinstance(path, str) else ""


def _bash(value: Mapping[str, JsonValue]) -> JsonValue:
    if value.get("kind") == "background":
        job = value.get("job_id")
        return {
            "stdout": "",
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "backgroundTaskId": job if isinstance(job, str) else "",
        }
    return {
        "stdout": _text(value.get("stdout")),
        "stderr": _text(value.get("stderr")),
        "interrupted": bool(value.get("timed_out")) or bool(value.get("aborted")),
        "isImage": False,
    }


def _read(arguments: Mapping[str, JsonValue], value: Mapping[str, JsonValue]) -> JsonValue:
    lines = value.get("lines")
    rows = [r for r in lines if isinstance(r, Mapping)] if isinstance(lines, Sequence) else []
    first = rows[0].get("number") if rows else value.get("offset")
    return {
        "type": "text",
        "file": {
            "filePath": _file_path(arguments, value),
            "content": "\n".join(str(r.get("text", "")) for r in rows),
            "numLines": len(rows),
            "startLine": first if isinstance(first, int) else 1,
            "totalLines": value.get("total_lines", len(rows)),
        },
    }


def _write(arguments: Mapping[str, JsonValue], value: Mapping[str, JsonValue]) -> JsonValue:
    before = value.get("before")
    after = _text(value.get("after"))
    return {
        "type": "update" if value.get("operation") == "update" else "create",
        "filePath": _file_path(arguments, value),
        "content": after,
        "structuredPatch": structured_patch(before, after) if isinstance(before, str) else [],
        "originalFile": before if isinstance(before, str) else None,
    }


def _edit(arguments: Mapping[str, JsonValue], value: Mapping[str, JsonValue]) -> JsonValue:
    before, after = _text(value.get("before")), _text(value.get("after"))
    return {
        "filePath": _file_path(arguments, value),
        "oldString": _text(arguments.get("old_string")),
        "newString": _text(arguments.get("new_string")),
        "originalFile": before,
        "structuredPatch": structured_patch(before, after),
        "userModified": False,
        "replaceAll": bool(arguments.get("replace_all", False)),
    }


def claude_tool_response(
    tether_name: str, arguments: JsonValue | None, value: JsonValue, text: str
) -> JsonValue:
    """What Claude Code would put in `tool_response` for this call (see the module note);
    `value` is the tool's canonical value, `text` what the model was shown."""
    args: Mapping[str, JsonValue] = arguments if isinstance(arguments, Mapping) else {}
    if not isinstance(value, Mapping):
        return text
    if tether_name == "bash":
        return _bash(value)
    if tether_name == "read":
        return _read(args, value)
    if tether_name == "write":
        return _write(args, value)
    if tether_name == "edit":
        return _edit(args, value)
    return value

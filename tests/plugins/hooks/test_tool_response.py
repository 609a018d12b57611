"""`PostToolUse`'s `tool_response` has Claude Code's documented shape per tool (issue 12 §2).

Contract: Bash → `{stdout, stderr, interrupted, isImage}`; Read → `{type: "text", file:
{filePath, content, numLines, startLine, totalLines}}`; Write → `{type, filePath, content,
structuredPatch, originalFile}`; Edit → `{filePath, oldString, newString, originalFile,
structuredPatch, userModified, replaceAll}`; other tools → their canonical value.
"""

from __future__ import annotations

from tether.plugins.hooks.tool_response import claude_tool_response, structured_patch


def test_bash_gets_stdout_stderr_interrupted_and_is_image() -> None:
    value = {
        "kind": "foreground",
        "exit_code": 1,
        "signal": None,
        "timed_out": False,
        "aborted": False,
        "timeout_ms": 120000,
        "stdout": {"text": "out\n", "truncated": False},
        "stderr": {"text": "err\n", "truncated": False},
    }

    response = claude_tool_response("bash", {"command": "x"}, value, "out")

    assert response == {
        "stdout": "out\n",
        "stderr": "err\n",
        "interrupted": False,
        "isImage": False,
    }


def test_a_bash_command_killed_at_its_timeout_is_interrupted() -> None:
    value = {
        "kind": "foreground",
        "timed_out": True,
        "stdout": {"text": "", "truncated": False},
        "stderr": {"text": "", "truncated": False},
    }

    response = claude_tool_response("bash", {}, value, "")

    assert isinstance(response, dict)
    assert response["interrupted"] is True


def test_read_gets_the_file_object() -> None:
    value = {
        "path": "a.txt",
        "offset": 2,
        "lines": [{"number": 2, "text": "two"}, {"number": 3, "text": "three"}],
        "total_lines": 3,
    }

    response = claude_tool_response("read", {"file_path": "/w/a.txt", "offset": 2}, value, "")

    assert response == {
        "type": "text",
        "file": {
            "filePath": "/w/a.txt",
            "content": "two\nthree",
            "numLines": 2,
            "startLine": 2,
            "totalLines": 3,
        },
    }


def test_write_of_a_new_file_is_a_create_without_an_original() -> None:
    value = {"path": "n.txt", "operation": "create", "before": None, "after": "hi\n"}

    response = claude_tool_response(
        "write", {"file_path": "/w/n.txt", "content": "hi\n"}, value, ""
    )

    assert response == {
        "type": "create",
        "filePath": "/w/n.txt",
        "content": "hi\n",
        "structuredPatch": [],
        "originalFile": None,
    }


def test_edit_gets_the_strings_the_original_and_a_structured_patch() -> None:
    value = {"path": "a.txt", "before": "a\nb\nc\n", "after": "a\nB\nc\n"}
    args = {"file_path": "/w/a.txt", "old_string": "b", "new_string": "B"}

    response = claude_tool_response("edit", args, value, "")

    assert response == {
        "filePath": "/w/a.txt",
        "oldString": "b",
        "newString": "B",
        "originalFile": "a\nb\nc\n",
        "structuredPatch": [
            {
                "oldStart": 1,
                "oldLines": 3,
                "newStart": 1,
                "newLines": 3,
                "lines": [" a", "-b", "+B", " c"],
            }
        ],
        "userModified": False,
        "replaceAll": False,
    }


def test_a_patch_of_an_update_has_one_hunk_per_separated_change() -> None:
    before = "".join(f"{n}\n" for n in range(20))
    after = before.replace("1\n", "one\n", 1).replace("18\n", "eighteen\n")

    hunks = structured_patch(before, after)

    assert [(h["oldStart"], h["oldLines"]) for h in hunks if isinstance(h, dict)] == [
        (1, 5),
        (16, 5),
    ]


def test_another_tool_gets_its_canonical_value() -> None:
    assert claude_tool_response("glob", {}, {"files": ["a"]}, "a") == {"files": ["a"]}

"""`grep` searches file contents like Claude Code's Grep (ripgrep through `ctx.shell`): paths
newest first, matching lines with context, or counts; filters by glob and type; `.gitignore`
respected and `.git` skipped; capped with a notice."""

from __future__ import annotations

from pathlib import Path

from .conftest import Search, mount, touch


async def test_files_with_matches_lists_paths_newest_first(search: Search) -> None:
    old = touch(search.root / "old.py", "needle\n", age_s=100)
    new = touch(search.root / "pkg" / "new.py", "a needle here\n", age_s=1)
    touch(search.root / "other.py", "nothing\n")
    assert await search.text("grep", pattern="needle") == f"Found 2 files\n{new}\n{old}"


async def test_no_match_says_no_files_found(search: Search) -> None:
    touch(search.root / "a.txt", "hay\n")
    assert await search.text("grep", pattern="needle") == "No files found"
    assert await search.text("grep", pattern="needle", output_mode="content") == "No matches found"


async def test_content_mode_shows_numbered_lines_with_context(search: Search) -> None:
    path = touch(search.root / "ctx.txt", "a\nb\nhello 1\nc\nd\ne\nf\nhello 2\ng\n")
    text = await search.text("grep", pattern="hello", output_mode="content", **{"-C": 1})
    assert text == "\n".join(
        [
            f"{path}-2-b",
            f"{path}:3:hello 1",
            f"{path}-4-c",
            "--",
            f"{path}-7-f",
            f"{path}:8:hello 2",
            f"{path}-9-g",
        ]
    )


async def test_content_mode_can_drop_line_numbers_and_ignore_case(search: Search) -> None:
    path = touch(search.root / "a.txt", "Hello\nhello\nbye\n")
    text = await search.text(
        "grep", pattern="HELLO", output_mode="content", **{"-n": False, "-i": True}
    )
    assert text == f"{path}:Hello\n{path}:hello"


async def test_count_mode_lists_counts_and_a_total(search: Search) -> None:
    a = touch(search.root / "a.txt", "x\nx\ny\n")
    text = await search.text("grep", pattern="x", output_mode="count", path="a.txt")
    assert text == f"{a}:2\n\nFound 2 total occurrences across 1 file."


async def test_glob_and_type_filter_the_files_searched(search: Search) -> None:
    py = touch(search.root / "src" / "m.py", "needle\n")
    touch(search.root / "src" / "m.js", "needle\n")
    touch(search.root / "notes.md", "needle\n")
    assert await search.text("grep", pattern="needle", glob="*.py") == f"Found 1 file\n{py}"
    assert await search.text("grep", pattern="needle", type="py") == f"Found 1 file\n{py}"
    both = await search.text("grep", pattern="needle", glob="*.{py,js}")
    assert both.startswith("Found 2 files\n")


async def test_gitignored_files_and_the_git_directory_are_skipped(search: Search) -> None:
    touch(search.root / ".gitignore", "build/\n*.log\n!keep.log\n")
    touch(search.root / "build" / "out.txt", "needle\n")
    touch(search.root / "debug.log", "needle\n")
    keep = touch(search.root / "keep.log", "needle\n", age_s=3)
    touch(search.root / ".git" / "HEAD", "needle\n")
    hidden = touch(search.root / ".env.example", "needle\n", age_s=2)
    src = touch(search.root / "src" / "a.txt", "needle\n", age_s=1)
    assert await search.text("grep", pattern="needle") == f"Found 3 files\n{src}\n{hidden}\n{keep}"


async def test_head_limit_caps_results_with_a_truncation_notice(search: Search) -> None:
    path = touch(search.root / "many.txt", "".join(f"hit {n}\n" for n in range(1, 6)))
    text = await search.text("grep", pattern="hit", output_mode="content", head_limit=2)
    assert text == (
        f"{path}:1:hit 1\n{path}:2:hit 2\n\n(Results are truncated: showing the first 2 of 5"
        " lines. Use a more specific pattern or path, or raise head_limit.)"
    )


async def test_the_default_cap_comes_from_config(tmp_path: Path) -> None:
    for n in range(3):
        touch(tmp_path / f"f{n}.txt", "hit\n", age_s=n)
    harness = await mount(tmp_path, head_limit=2)
    text = await harness.text("grep", pattern="hit")
    assert text == (
        f"Found 3 files\n{tmp_path / 'f0.txt'}\n{tmp_path / 'f1.txt'}\n\n(Results are truncated:"
        " showing the first 2 of 3 files. Use a more specific pattern or path, or raise"
        " head_limit.)"
    )
    await harness.ctx.dispose()


async def test_multiline_patterns_span_lines(search: Search) -> None:
    path = touch(search.root / "m.txt", "start\nmiddle\nend\nother\n")
    text = await search.text("grep", pattern="start.*end", output_mode="content", multiline=True)
    assert text == f"{path}:1:start\n{path}:2:middle\n{path}:3:end"


async def test_a_missing_path_is_search_not_found(search: Search) -> None:
    failure = await search.fail("grep", pattern="x", path="nope")
    assert failure.error.message == f'cannot search "{search.root / "nope"}": not found'
    assert failure.code == "SEARCH_NOT_FOUND"


async def test_an_invalid_regex_is_invalid_arguments(search: Search) -> None:
    touch(search.root / "a.txt", "x\n")
    failure = await search.fail("grep", pattern="(unclosed")
    assert failure.code == "SEARCH_INVALID_ARGS"
    assert failure.error.message == (
        "invalid search: rg: regex parse error:\n    (?:(unclosed)\n    ^\nerror: unclosed group"
    )


async def test_the_schema_has_no_timeout_and_the_definition_declares_one(tmp_path: Path) -> None:
    harness = await mount(tmp_path, timeout_ms=1234)
    schemas = {s["name"]: s for s in harness.ctx.tools.schemas()}
    grep_props = schemas["grep"]["parameters"]["properties"]
    assert set(grep_props) == {
        "pattern",
        "path",
        "glob",
        "output_mode",
        "-B",
        "-A",
        "-C",
        "-n",
        "-i",
        "type",
        "head_limit",
        "multiline",
    }
    assert set(schemas["glob"]["parameters"]["properties"]) == {"pattern", "path"}
    assert harness.ctx.tools.get("grep").timeout_ms == 1234
    assert harness.ctx.tools.get("glob").timeout_ms == 1234
    await harness.ctx.dispose()


async def test_a_regex_over_ripgrep_s_size_limit_is_invalid_arguments(search: Search) -> None:
    touch(search.root / "a.txt", "x\n")
    failure = await search.fail("grep", pattern="\\w{5000}\\w{5000}")
    assert failure.code == "SEARCH_INVALID_ARGS"
    assert failure.error.message == (
        "invalid search: rg: compiled regex exceeds size limit of 104857600"
    )


async def test_a_glob_ripgrep_cannot_parse_is_invalid_arguments(search: Search) -> None:
    failure = await search.fail("glob", pattern="{{a}}")
    assert failure.code == "SEARCH_INVALID_ARGS"
    assert failure.error.message == (
        "invalid search: rg: error parsing glob '{{a}}': nested alternate groups are not allowed"
    )

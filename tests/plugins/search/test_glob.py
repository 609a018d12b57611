"""`glob` finds files by name (ripgrep's `--files`): a pattern without `/` matches names at any
depth, one with `/` matches paths under the search root; newest first; capped with Claude
Code's notice; `.gitignore` respected."""

from __future__ import annotations

from pathlib import Path

from .conftest import Search, mount, touch


async def test_glob_lists_matching_files_newest_first(search: Search) -> None:
    a = touch(search.root / "src" / "a.py", "", age_s=5)
    b = touch(search.root / "src" / "deep" / "b.py", "", age_s=1)
    touch(search.root / "src" / "c.txt", "")
    assert await search.text("glob", pattern="**/*.py") == f"{b}\n{a}"
    assert await search.text("glob", pattern="*.py") == f"{b}\n{a}"
    assert await search.text("glob", pattern="src/*.py") == f"{a}"


async def test_glob_is_relative_to_the_given_path(search: Search) -> None:
    inner = touch(search.root / "pkg" / "mod" / "x.ts", "")
    touch(search.root / "x.ts", "")
    assert await search.text("glob", pattern="mod/*.ts", path="pkg") == f"{inner}"


async def test_glob_without_matches_says_no_files_found(search: Search) -> None:
    assert await search.text("glob", pattern="*.nothing") == "No files found"


async def test_glob_respects_gitignore(search: Search) -> None:
    touch(search.root / ".gitignore", "dist\n")
    touch(search.root / "dist" / "bundle.js", "")
    kept = touch(search.root / "src" / "app.js", "")
    assert await search.text("glob", pattern="**/*.js") == f"{kept}"


async def test_glob_results_are_capped_with_a_notice(tmp_path: Path) -> None:
    for n in range(4):
        touch(tmp_path / f"f{n}.txt", "", age_s=n)
    harness = await mount(tmp_path, glob_limit=2)
    text = await harness.text("glob", pattern="*.txt")
    assert text == (
        f"{tmp_path / 'f0.txt'}\n{tmp_path / 'f1.txt'}\n"
        "(Results are truncated. Consider using a more specific path or pattern.)"
    )
    await harness.ctx.dispose()


async def test_glob_over_a_file_path_is_refused(search: Search) -> None:
    path = touch(search.root / "a.txt", "")
    failure = await search.fail("glob", pattern="*", path="a.txt")
    assert failure.error.message == f'cannot search "{path}": not a directory'

"""Instruction files loaded into the system prompt, as Codex (`AGENTS.md`) and Claude Code
(`CLAUDE.md`) load them.

Owns which files are read and how they join the prompt: the user's `$TETHER_HOME/AGENTS.md`,
then, from the project root (the nearest ancestor of the workspace holding `.git`; the workspace
itself when there is none) down to the workspace, each directory's `AGENTS.md` and `CLAUDE.md`
(a file reached twice — `CLAUDE.md` a symlink to `AGENTS.md` — or with the same text as one
already read is read once). Each file is cut at `MAX_FILE_BYTES` with a note saying so. Files
that cannot be read are skipped. They follow the built-in prompt under `# Instructions`, each
under a `## <path>` heading, in the order read (the nearest last, so it reads as the most
specific).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

__all__ = ["MAX_FILE_BYTES", "instruction_files", "with_instructions"]

MAX_FILE_BYTES: Final = 32 * 1024
NAMES: Final = ("AGENTS.md", "CLAUDE.md")


def _project_root(cwd: Path) -> Path:
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return cwd


def instruction_files(cwd: Path, home: Path) -> list[Path]:
    """The instruction files for the workspace `cwd`, in the order they join the prompt."""
    candidates = [home / "AGENTS.md"]
    root = _project_root(cwd)
    chain = [cwd, *cwd.parents]
    directories = list(reversed(chain[: chain.index(root) + 1]))
    candidates += [directory / name for directory in directories for name in NAMES]
    found: list[Path] = []
    seen: set[str] = set()
    for path in candidates:
        key = os.path.realpath(path)
        if key in seen or not path.is_file():
            continue
        seen.add(key)
        found.append(path)
    return found


def _read(path: Path) -> str | None:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    text = data[:MAX_FILE_BYTES].decode("utf-8", "replace").strip()
    if len(data) > MAX_FILE_BYTES:
        text += f"\n[… cut at {MAX_FILE_BYTES} bytes]"
    return text


def with_instructions(prompt: str, cwd: Path, home: Path) -> str:
    """`prompt` followed by the instruction files' text (unchanged when there are none)."""
    sections: list[str] = []
    texts: set[str] = set()
    for path in instruction_files(cwd, home):
        text = _read(path)
        if not text or text in texts:
            continue
        texts.add(text)
        sections.append(f"## {path}\n\n{text}")
    if not sections:
        return prompt
    return (
        f"{prompt}\n\n# Instructions\n\n"
        "The user's and the project's instructions for this workspace; follow them (the later, "
        "more specific ones win where they differ).\n\n" + "\n\n".join(sections)
    )

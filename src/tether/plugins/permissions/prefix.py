"""The rule "don't ask again" saves for a bash command: its command prefix, as Claude Code does.

Owns `command_prefix` (one simple command → the words that name what it does: `npm test -- -x`
→ `npm test`, `git commit -m x` → `git commit`, `npm run build` → `npm run build`, `python -m
pytest tests` → `python -m pytest`, `pytest tests/a.py` → `pytest`) and `prefix_rules` (a line →
one `Bash(<prefix>:*)` rule per simple command that needs one). A prefix is offered only where it
cannot grant more than the command's own kind of work: commands that run other programs or
delete and overwrite (`bash`, `python script.py`, `env`, `xargs`, `sudo`, `rm`, `dd`...) get no
prefix rule — their exact command is the rule — and a word that expands or globs ends the prefix.
A prefix rule never covers a redirection that writes a file (`PermissionRule.covers`), so for
`echo hi > /var/tmp/x` the policy offers the exact command instead (it checks that each
suggestion allows the call as approved).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .command_line import SimpleCommand

__all__ = ["command_prefix", "joined", "prefix_rules"]

_SUBCOMMANDS: Final = frozenset(
    {
        "apt",
        "apt-get",
        "brew",
        "bun",
        "bundle",
        "cargo",
        "composer",
        "conda",
        "deno",
        "docker",
        "dotnet",
        "gh",
        "git",
        "go",
        "gradle",
        "helm",
        "hg",
        "kubectl",
        "make",
        "mix",
        "mvn",
        "npm",
        "pip",
        "pip3",
        "pipenv",
        "pnpm",
        "poetry",
        "rake",
        "rustup",
        "swift",
        "systemctl",
        "terraform",
        "tox",
        "uv",
        "yarn",
        "just",
        "nox",
        "hatch",
    }
)
"""Tools whose second word is a subcommand (`git commit`, `cargo test`)."""

_SCRIPT_RUNNERS: Final = frozenset({"npm", "pnpm", "yarn", "bun"})
"""`npm run build`: the script name is part of the prefix."""

_NO_PREFIX: Final = frozenset(
    {
        "bash",
        "sh",
        "zsh",
        "fish",
        "dash",
        "ksh",
        "eval",
        "exec",
        "source",
        ".",
        "env",
        "sudo",
        "su",
        "doas",
        "xargs",
        "nohup",
        "timeout",
        "nice",
        "ionice",
        "time",
        "watch",
        "command",
        "builtin",
        "ssh",
        "scp",
        "rsync",
        "node",
        "ruby",
        "perl",
        "php",
        "python",
        "python3",
        "lua",
        "osascript",
        "awk",
        "sed",
        "find",
        "rm",
        "rmdir",
        "dd",
        "mkfs",
        "shred",
        "chmod",
        "chown",
        "chgrp",
        "mv",
        "cp",
        "ln",
        "truncate",
        "tee",
        "kill",
        "pkill",
        "killall",
        "curl",
        "wget",
        "npx",
        "uvx",
        "pipx",
        "bunx",
    }
)
"""Commands a prefix would open too far (they run other programs or destroy data)."""

_PYTHON: Final = frozenset({"python", "python3"})


def _word(text: str) -> bool:
    """A plain subcommand word: no flag, path, assignment or value syntax."""
    return bool(text) and text[0].isalpha() and all(c.isalnum() or c in "-_:." for c in text)


def command_prefix(command: SimpleCommand) -> str | None:
    """The prefix of one simple command (see the module note), or None when none is safe."""
    if command.assignments or not command.words:
        return None
    words = [w.value for w in command.words]
    name = words[0]
    if name is None or "/" in name:
        return None
    if name in _PYTHON and words[1:2] == ["-m"] and len(words) > 2:
        module = words[2]
        return f"{name} -m {module}" if module and _word(module) and module != "pip" else None
    if name in _NO_PREFIX:
        return None
    taken = [name]
    if name in _SUBCOMMANDS:  # `git:*` would allow every git command: a subcommand is needed
        sub = words[1] if len(words) > 1 else None
        if sub is None or not _word(sub):
            return None
        taken.append(sub)
        script = words[2] if len(words) > 2 else None
        if name in _SCRIPT_RUNNERS and sub in ("run", "run-script") and script and _word(script):
            taken.append(script)
    return " ".join(taken)


def prefix_rules(
    command: str, *, claude_name: str = "Bash", needed: Callable[[str], bool] | None = None
) -> tuple[str, ...] | None:
    """`Bash(<prefix>:*)` for each simple command of `command` for which `needed(text)` (the
    command as written, whitespace collapsed; default: every one) says a rule is needed, in
    order and each once; None when one of them has no safe prefix or the line cannot be read
    completely."""
    from .command_line import parse_command_line  # the reader, at the first line read

    line = parse_command_line(command)
    if line.problem is not None or not line.commands:
        return None
    rules: list[str] = []
    for simple in line.commands:
        if needed is not None and not needed(simple.text):
            continue
        prefix = command_prefix(simple)
        if prefix is None:
            return None
        rule = f"{claude_name}({prefix}:*)"
        if rule not in rules:
            rules.append(rule)
    return tuple(rules)


def joined(rules: Sequence[str]) -> str:
    """How a list of rules reads in a sentence."""
    return rules[0] if len(rules) == 1 else ", ".join(rules[:-1]) + " and " + rules[-1]

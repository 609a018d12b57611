"""The command line of `tether run`, `tether chat` and `tether [-p] "prompt"`: Claude Code's flags,
parsed with the standard library's `argparse` (the hot path imports no cyclopts: issue 36).

Owns `AgentFlags` (what was asked, as data), `parse_agent_flags` (argv → flags, or the exit code
2 with one line on stderr), `FLAGS` (every flag the three accept, for docs/claude-code.md's test)
and `split_rules` (`--allowedTools "Bash(git log:*) Edit,Read"` → three rules). An unknown
option is named with the nearest real one:

    tether run: unknown option "--bogus" (did you mean "--debug"?); `tether run --help` lists
    the options

Flags Claude Code has and tether cannot honour yet are parsed and refused by name with the
reason (`--permission-prompt-tool` other than `stdio`, `--fork-session`, a
`--setting-sources` other than all three). Does not open the agent: `tether.cli.commands.agent`
does, from the flags.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, NoReturn

__all__ = ["FLAGS", "AgentFlags", "FlagError", "parse_agent_flags", "split_rules"]

Command = Literal["run", "chat", "root"]
PERMISSION_MODES: Final = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
SETTING_SOURCES: Final = ("user", "project", "local")


class FlagError(Exception):
    """A command line that cannot be used; the message is one line."""


@dataclass(frozen=True, slots=True)
class AgentFlags:
    """What `run`/`chat`/the root were asked for. `resume` True: pick one (chat)."""

    task: str | None = None
    print_: bool = False
    config: Path | None = None
    model: str | None = None
    cwd: Path | None = None
    yolo: bool = False
    allow: tuple[str, ...] = ()
    disallow: tuple[str, ...] = ()
    tools: tuple[str, ...] | None = None
    permission_mode: str | None = None
    sandbox: str | None = None
    continue_: bool = False
    resume: str | bool | None = None
    output_format: Literal["text", "json", "stream-json"] = "text"
    input_format: Literal["text", "stream-json"] = "text"
    permission_prompt_tool: str | None = None
    include_partial_messages: bool = False
    max_turns: int | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    add_dirs: tuple[Path, ...] = ()
    mcp_config: tuple[str, ...] = ()
    strict_mcp_config: bool = False
    settings: str | None = None
    verbose: bool = False
    debug: bool = False
    context_window: int | None = None
    show_reasoning: bool = False
    given: frozenset[str] = field(default_factory=frozenset)
    """The options given on the command line (their first spelling), for the checks that
    depend on the command."""


def split_rules(values: Sequence[str]) -> tuple[str, ...]:
    """Rules from `--allowedTools`-style values: separated by commas or spaces outside
    parentheses (`"Bash(git log:*) Edit,Read"` is three rules)."""
    rules: list[str] = []
    for value in values:
        depth, current = 0, ""
        for char in value:
            if char == "(":
                depth += 1
            elif char == ")":
                depth = max(0, depth - 1)
            if depth == 0 and (char == "," or char.isspace()):
                if current:
                    rules.append(current)
                current = ""
                continue
            current += char
        if current:
            rules.append(current)
    return tuple(rules)


class _Parser(argparse.ArgumentParser):
    """argparse, with one-line errors that name the command and raise instead of exiting, and
    the options it was given (`options`: argparse keeps its own list private)."""

    def __init__(self, **kwargs: Any) -> None:
        self.options: list[argparse.Action] = []  # before: the base adds -h/--help
        super().__init__(**kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        if action.option_strings:
            self.options.append(action)
        return action

    def error(self, message: str) -> NoReturn:
        raise FlagError(f"{self.prog}: {message}; `{self.prog} --help` lists the options")


class _Version(argparse.Action):
    """`--version`: tether's version line (`tether.cli.app.version_text`), then exit 0."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        from .version import version_text

        sys.stdout.write(version_text() + "\n")
        parser.exit(0)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


def _parser(command: Command) -> _Parser:
    prog = "tether" if command == "root" else f"tether {command}"
    parser = _Parser(
        prog=prog,
        usage=f"{prog} [options] [PROMPT]",
        description=_DESCRIPTIONS[command],
        allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("task", nargs="?", metavar="PROMPT", help="What to do; `-` (or piped stdin) reads it.")
    add(
        "-p",
        "--print",
        dest="print_",
        action="store_true",
        help="Answer the prompt and exit, without a chat (what `tether run` does).",
    )
    add("--config", type=Path, help="A tether.yml to use.")
    add("--model", help="The model to ask.")
    add("--cwd", type=Path, help="The workspace (default: the current directory).")
    add(
        "--yolo",
        "--dangerously-skip-permissions",
        dest="yolo",
        action="store_true",
        help="Run every tool call that no deny rule forbids, without asking "
        "(permission mode bypassPermissions); the sandbox still holds.",
    )
    add(
        "--allow",
        action="append",
        default=[],
        metavar="RULE",
        help="Allow tool calls matching this rule without asking, in Claude Code syntax, "
        "e.g. --allow 'Bash(npm test:*)'. Repeatable; deny rules still hold.",
    )
    add(
        "--allowedTools",
        "--allowed-tools",
        dest="allowed_tools",
        action="append",
        default=[],
        metavar="RULES",
        help="Allow rules, comma- or space-separated (Claude Code's flag): 'Bash(git log:*) Read'.",
    )
    add(
        "--disallowedTools",
        "--disallowed-tools",
        dest="disallowed_tools",
        action="append",
        default=[],
        metavar="RULES",
        help="Deny rules, comma- or space-separated: 'Bash(rm:*),WebFetch'. They hold in "
        "every mode.",
    )
    add(
        "--tools",
        metavar="LIST",
        help="The tools the model may use, comma-separated Claude Code or tether names "
        '("Bash,Read"; "" for none; "default" for all); the others are denied.',
    )
    add("--permission-mode", choices=PERMISSION_MODES, help="The permission mode to start in.")
    add(
        "--permission-prompt-tool",
        metavar="TOOL",
        help="stdio: ask the Agent SDK application (can_use_tool) about every call that would "
        "ask; with --input-format stream-json only.",
    )
    add(
        "--sandbox",
        choices=("read-only", "workspace-write", "danger-full-access"),
        help="Where commands may write and whether they reach the network: read-only, "
        "workspace-write (the default: the workspace, a private /tmp, no network) or "
        "danger-full-access (no sandbox). Every command stays contained; --yolo never "
        "changes this. See docs/sandbox.md.",
    )
    add(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="Continue the latest session of this directory.",
    )
    add(
        "-r",
        "--resume",
        nargs="?",
        const=True,
        metavar="ID",
        help="Continue the session with this id; in chat, without an id, pick one from a list.",
    )
    add(
        "--fork-session",
        action="store_true",
        help="With --resume/--continue, continue in a new session (not yet supported).",
    )
    add(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
        help="text (the answer), json (one result object) or stream-json (one record per "
        "line), in Claude Code's schema; see docs/output-format.md. Headless only.",
    )
    add(
        "--input-format",
        choices=("text", "stream-json"),
        default="text",
        help="text (the prompt) or stream-json (user messages and control requests as JSON "
        "lines on stdin, the session open until stdin ends: the Claude Agent SDK's protocol, "
        "see docs/agent-sdk.md).",
    )
    add(
        "--include-partial-messages",
        action="store_true",
        help="With --output-format stream-json, also write the model's text as it streams "
        "(stream_event records).",
    )
    add(
        "--max-turns",
        type=_positive,
        metavar="N",
        help="End the turn after N model requests (result error_max_turns).",
    )
    add("--system-prompt", metavar="TEXT", help="Replace tether's system prompt.")
    add("--system-prompt-file", type=Path, metavar="FILE", help="--system-prompt from a file.")
    add(
        "--append-system-prompt",
        metavar="TEXT",
        help="Add TEXT to the end of the system prompt.",
    )
    add(
        "--append-system-prompt-file",
        type=Path,
        metavar="FILE",
        help="--append-system-prompt from a file.",
    )
    add(
        "--add-dir",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="Another directory the model may read and write as the working directory, "
        "under the same sandbox (repeatable; permissions.additionalDirectories in settings "
        "too).",
    )
    add(
        "--mcp-config",
        action="append",
        default=[],
        metavar="FILE_OR_JSON",
        help="MCP servers from a file or a JSON string with mcpServers (repeatable).",
    )
    add(
        "--strict-mcp-config",
        action="store_true",
        help="Use only the servers of --mcp-config (not .mcp.json nor the config's).",
    )
    add(
        "--settings",
        metavar="FILE_OR_JSON",
        help="A Claude Code settings file, or a JSON string: its permissions and hooks apply "
        "on top of the discovered ones.",
    )
    add(
        "--setting-sources",
        metavar="LIST",
        help="Which settings files to read: user,project,local (only all three so far).",
    )
    add("--verbose", action="store_true", help="Accepted for Claude Code's scripts.")
    add("-V", "--version", action=_Version, nargs=0, help="Print tether's version and exit.")
    add("--debug", action="store_true", help="Print the traceback of an unexpected error.")
    add(
        "--context-window",
        type=_positive,
        metavar="TOKENS",
        help="The model's context window in tokens (default $TETHER_CONTEXT_WINDOW or 128000); "
        "a request that would not fit (minus a reserve) is compacted first.",
    )
    add("--show-reasoning", action="store_true", help="Print the model's reasoning, dimmed.")
    return parser


_DESCRIPTIONS: Final[dict[Command, str]] = {
    "run": "Answer one task, print the final answer, and exit (0 iff the turn completed).\n\n"
    "Nobody is asked: a call the permission rules would ask about is refused (the model is told "
    "why and may try something else) unless --allow or --yolo permits it. On a terminal the "
    "answer streams; piped, stdout gets only the answer and progress goes to stderr.\n\n"
    "With --temporal ADDRESS the turn runs as a durable session on Temporal "
    "(`tether run --temporal ADDRESS --help`; docs/temporal.md).",
    "chat": "Talk to the agent, starting with PROMPT when given. Esc or Ctrl-C aborts the "
    "running turn; Ctrl-C twice quits; /help lists commands; !command runs a command in the "
    "shell; Shift+Tab cycles the permission mode (default, acceptEdits, plan).\n\n"
    "Tool calls the permission rules ask about are shown with their arguments (a diff for edit "
    "and write) and wait for an answer: y (yes, once), a (yes, and don't ask again: the shown "
    "rule is saved to .claude/settings.local.json), s (yes, for this session), n (no) or d (no, "
    "with a reason the model reads).",
    "root": 'Claude Code\'s command line: `tether "PROMPT"` starts a chat with it, `tether -p '
    '"PROMPT"` answers it and exits (tether run). Commands: `tether --help`.',
}


def _option_strings(parser: _Parser) -> list[str]:
    return [s for action in parser.options for s in action.option_strings]


if TYPE_CHECKING:
    FLAGS: tuple[str, ...]
    """Every option `run`, `chat` and the root accept, each spelling (built on first use: a
    command line builds only the parser it parses with)."""


def __getattr__(name: str) -> object:
    """`FLAGS`, built on first use."""
    if name != "FLAGS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    flags = tuple(_option_strings(_parser("root")))
    globals()["FLAGS"] = flags
    return flags


def _unknown(prog: str, unknown: list[str], known: Sequence[str]) -> FlagError:
    flag = next((u for u in unknown if u.startswith("-") and u != "-"), None)
    if flag is None:
        extra = " ".join(unknown)
        return FlagError(
            f"{prog}: unexpected argument {extra!r} (one prompt only: quote it); "
            f"`{prog} --help` lists the options"
        )
    name = flag.split("=", 1)[0]
    import difflib  # only for a bad flag: not on the path of a good command line

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    return FlagError(f'{prog}: unknown option "{name}"{hint}; `{prog} --help` lists the options')


def parse_agent_flags(command: Command, argv: Sequence[str]) -> AgentFlags:
    """Parse `argv` (after the command name). Raises FlagError (one line) for a command line
    that cannot be used; `--help` prints the help and raises SystemExit(0)."""
    parser = _parser(command)
    known = _option_strings(parser)
    namespace, unknown = parser.parse_known_args(list(argv))
    if unknown:
        raise _unknown(parser.prog, unknown, known)
    given = frozenset(
        action.option_strings[0]
        for action in parser.options
        if action.dest != "help" and getattr(namespace, action.dest) != action.default
    )
    return _flags(parser.prog, command, namespace, given)


def _read_file(prog: str, option: str, path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FlagError(f"{prog}: {option}: cannot read {path}: {exc.strerror or exc}") from None


def _flags(
    prog: str, command: Command, ns: argparse.Namespace, given: frozenset[str]
) -> AgentFlags:
    headless = command == "run" or ns.print_ or ns.input_format == "stream-json"

    def refuse(option: str, why: str) -> NoReturn:
        raise FlagError(f"{prog}: {option}: {why}")

    if ns.input_format == "stream-json":
        if ns.output_format != "stream-json":
            refuse("--input-format stream-json", "needs --output-format stream-json")
        if ns.task is not None:
            refuse("--input-format stream-json", "the prompts come on stdin, not as an argument")
    if ns.permission_prompt_tool is not None and (
        ns.permission_prompt_tool != "stdio" or ns.input_format != "stream-json"
    ):
        refuse(
            "--permission-prompt-tool",
            "only stdio, with --input-format stream-json (the Agent SDK's can_use_tool); an MCP "
            "tool is not yet supported",
        )
    if ns.fork_session:
        refuse("--fork-session", "not yet supported (continue the session, or start a new one)")
    if ns.setting_sources is not None:
        sources = {s.strip() for s in ns.setting_sources.split(",") if s.strip()}
        unknown = sources - set(SETTING_SOURCES)
        if unknown:
            refuse(
                "--setting-sources", f"unknown source {sorted(unknown)[0]!r} (user, project, local)"
            )
        if sources != set(SETTING_SOURCES):
            refuse("--setting-sources", "not yet supported (only user,project,local: all three)")
    if not headless:
        for option in ("--output-format", "--include-partial-messages"):
            if option in given:
                refuse(option, f'only with -p or tether run (e.g. tether -p {option} ... "task")')
    if ns.yolo and ns.permission_mode not in (None, "bypassPermissions"):
        refuse(
            "--permission-mode",
            f"{ns.permission_mode} contradicts --dangerously-skip-permissions/--yolo "
            "(bypassPermissions); pick one",
        )
    if headless and ns.resume is True:
        refuse("--resume", "give the session id (tether sessions list shows them)")
    if ns.system_prompt is not None and ns.system_prompt_file is not None:
        refuse("--system-prompt-file", "give --system-prompt or --system-prompt-file, not both")
    if ns.append_system_prompt is not None and ns.append_system_prompt_file is not None:
        refuse(
            "--append-system-prompt-file",
            "give --append-system-prompt or --append-system-prompt-file, not both",
        )
    system = ns.system_prompt
    if system is None:
        system = _read_file(prog, "--system-prompt-file", ns.system_prompt_file)
    append = ns.append_system_prompt
    if append is None:
        append = _read_file(prog, "--append-system-prompt-file", ns.append_system_prompt_file)
    tools = None
    if ns.tools is not None and ns.tools.strip() != "default":
        tools = split_rules([ns.tools])
    return AgentFlags(
        task=ns.task,
        print_=bool(ns.print_),
        config=ns.config,
        model=ns.model,
        cwd=ns.cwd,
        yolo=bool(ns.yolo),
        allow=(*ns.allow, *split_rules(ns.allowed_tools)),
        disallow=split_rules(ns.disallowed_tools),
        tools=tools,
        permission_mode=ns.permission_mode,
        sandbox=ns.sandbox,
        continue_=bool(ns.continue_),
        resume=ns.resume,
        output_format=ns.output_format,
        input_format=ns.input_format,
        permission_prompt_tool=ns.permission_prompt_tool,
        include_partial_messages=bool(ns.include_partial_messages),
        max_turns=ns.max_turns,
        system_prompt=system,
        append_system_prompt=append,
        add_dirs=tuple(ns.add_dir),
        mcp_config=tuple(ns.mcp_config),
        strict_mcp_config=bool(ns.strict_mcp_config),
        settings=ns.settings,
        verbose=bool(ns.verbose),
        debug=bool(ns.debug),
        context_window=ns.context_window,
        show_reasoning=bool(ns.show_reasoning),
        given=given,
    )


def main_flags(command: Command, argv: Sequence[str]) -> AgentFlags | int:
    """`parse_agent_flags`, with a FlagError written to stderr as exit code 2 and `--help` as
    0."""
    try:
        return parse_agent_flags(command, argv)
    except FlagError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else 0

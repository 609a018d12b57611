"""Soak: scripted turns through real `tether` processes, some of them SIGKILLed, then check.

Run: `python bench/soak.py [--turns 1000] [--seed N] [--keep]`. Everything is real except the
model: a `ScriptedModelServer` on 127.0.0.1 (in this process) plans each turn from the prompt
(one to three steps of one to three tool calls: bash commands — quick ones, slow ones, ones that
start a `setsid -f` daemon, a double fork or a `nohup` job, a 60k-line output that spills, a
background job —, read, write, edit, grep, glob, todo_write; then a text answer). `tether run`
and `tether chat` run as subprocesses of this Python with this checkout's `src` first on
`PYTHONPATH`, against a temporary `TETHER_HOME` and workspace, with `--yolo`; a Claude Code
`PreToolUse` hook on Bash runs for every bash call (and starts a `setsid -f` daemon of its own
when the command says `hookdaemon`). A process is a new session (`run`), a turn added to an
earlier session (`run --resume`, which repairs one a kill left open), or a `chat` of two to four
turns. Each turn draws a kill with probability 1/20: the process gets SIGKILL at a moment drawn
uniformly from its expected life (boot included: the median time per turn so far times its
turns), so kills land in boot, session creation, model streaming, tool runs and teardown; a
process that ends before its moment carries the kill over to the next process.

After every command that ran to its end, the processes of killed tethers that are still alive
are counted as orphans: a process is one of ours when its environment has this run's `SOAK_RUN`
marker and a `TETHER_PROCESS_TAG` (every command tether spawns carries a tag; see
`tether.plugins.shell._tree`), and no tether is running at that moment, so whatever survives the
boot's sweep (`reap_orphans`) of the command that just ended is an orphan. Found ones are listed
and SIGKILLed so they are counted once. At the end: one more boot (`tether tools list`), the
orphan count, `tether sessions check` over all sessions, `sessions resume` (or `repair`, as
`check` advises) for every session it flags, `check` again. Printed: a table of turns, kills
(and the phase each one hit, read from the session log right after the kill), sessions,
repaired, unbalanced after check/resume (must be 0) and orphans after the next boot (must be 0);
the exit status is 1 when either is not 0 or a command hung.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import platform
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(SRC))

from tether.testing.scripted_model import (  # noqa: E402
    RecordedRequest,
    ScriptedModelServer,
    ScriptedResponse,
    text_reply,
    tool_calls_reply,
)

CLI = "import sys; sys.argv[0] = 'tether'; from tether.cli.app import run; run()"
KILL_ONE_IN = 20
HANG_S = 180.0
"""A command that has not ended after this long is killed and reported as hung."""

HOOK = """\
#!/bin/bash
input=$(cat)
case "$input" in
  *hookdaemon*) setsid -f sleep 300 ;;
esac
exit 0
"""


# -- the plan of each turn -----------------------------------------------------------------------


def _bash(command: str, **extra: object) -> tuple[str, dict[str, object]]:
    return "bash", {"command": command, "description": "soak command", **extra}


def tool_menu(turn: int, rng: random.Random) -> tuple[str, dict[str, object]]:
    """One tool call (name, arguments) for `turn`."""
    pick = rng.random()
    if pick < 0.55:
        command = rng.choice(
            [
                "echo hello",
                "seq 1 200 | tail -3",
                "ls -la",
                "wc -l notes.txt",
                "sleep 0.4; echo slept",
                "for i in 1 2 3; do echo $i; sleep 0.15; done",
                "setsid -f sleep 300; sleep 0.6; echo daemon",
                "(sleep 300 &); sleep 0.5; echo double fork",
                "nohup sleep 300 >/dev/null 2>&1 & sleep 0.4; echo nohup",
                "sleep 0.3; echo hookdaemon",
                "seq 1 60000",
                "exit 3",
            ]
        )
        return _bash(command)
    if pick < 0.60:
        return _bash("sleep 300", run_in_background=True)
    if pick < 0.72:
        return "read", {"file_path": "notes.txt"}
    if pick < 0.80:
        return "write", {"file_path": f"out/t{turn}.txt", "content": f"turn {turn}\n" * 20}
    if pick < 0.84:
        return "edit", {"file_path": "notes.txt", "old_string": "absent", "new_string": "x"}
    if pick < 0.92:
        return "grep", {"pattern": "hello|turn", "path": "."}
    if pick < 0.97:
        return "glob", {"pattern": "**/*.txt"}
    todos = [{"content": f"step {i}", "status": "pending"} for i in range(3)]
    return "todo_write", {"todos": todos}


def plan_turn(turn: int, rng: random.Random) -> list[list[tuple[str, dict[str, object]]]]:
    """The tool calls of each step of `turn` (then a text answer)."""
    steps = rng.choice([1, 1, 2, 2, 3])
    return [[tool_menu(turn, rng) for _ in range(rng.choice([1, 1, 2, 3]))] for _ in range(steps)]


class Model:
    """The scripted model: answers each request from the plan of the turn its prompt names."""

    def __init__(self) -> None:
        self.plans: dict[int, list[list[tuple[str, dict[str, object]]]]] = {}

    def respond(self, request: RecordedRequest) -> ScriptedResponse:
        messages = request.messages
        start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        turn = _turn_of(messages[start]) if start >= 0 else None
        if turn is None or turn not in self.plans:
            return text_reply("I have no plan for this.")
        step = sum(1 for m in messages[start + 1 :] if m.get("role") == "assistant")
        plan = self.plans[turn]
        if step >= len(plan):
            return text_reply(f"turn {turn} is done")
        calls = [
            (f"t{turn}s{step}c{i}", name, json.dumps(arguments))
            for i, (name, arguments) in enumerate(plan[step])
        ]
        return tool_calls_reply(*calls)


def _turn_of(message: dict[str, object]) -> int | None:
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        return None
    for word in content.split():
        if word.startswith("soak-turn-"):
            with contextlib.suppress(ValueError):
                return int(word.removeprefix("soak-turn-"))
    return None


# -- processes and orphans -----------------------------------------------------------------------


TICKS = os.sysconf("SC_CLK_TCK")


def now_ticks() -> float:
    """Now, in the clock of `/proc/<pid>/stat`'s start time (seconds since boot)."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


@dataclass(frozen=True)
class Found:
    """A live process of this run that tether spawned."""

    pid: int
    argv: str
    ppid: int
    pgid: int
    sid: int
    started: float  # seconds since boot


def ours(marker: str) -> list[Found]:
    """Live processes (not zombies) that carry this run's marker and a tether process tag."""
    want = f"SOAK_RUN={marker}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as file:
                env = file.read().split(b"\0")
            with open(f"/proc/{name}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{name}/cmdline", "rb") as file:
                argv = file.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError):
            continue
        if fields[0] in (b"Z", b"X") or want not in env:
            continue
        if any(item.startswith(b"TETHER_PROCESS_TAG=") for item in env):
            ppid, pgid, sid, start = (int(fields[i]) for i in (1, 2, 3, 19))
            found.append(Found(int(name), argv, ppid, pgid, sid, start / TICKS))
    return found


@dataclass(frozen=True)
class Ran:
    """One tether command: when it ran (seconds since boot), how, and whether it was killed."""

    args: tuple[str, ...]
    began: float
    ended: float
    killed: bool


@dataclass
class Outcome:
    code: int | None  # None: killed by the soak
    stdout: str
    stderr: str
    seconds: float
    hung: bool = False


@dataclass
class Soak:
    root: Path
    rng: random.Random
    model: Model
    base_url: str
    kill_one_in: int = KILL_ONE_IN
    marker: str = field(default_factory=lambda: os.urandom(6).hex())
    turns: int = 0
    processes: int = 0
    kills: int = 0
    planned: int = 0  # kills drawn so far; one the process outlived is carried to the next
    phases: collections.Counter[str] = field(default_factory=collections.Counter)
    orphans: list[tuple[int, str]] = field(default_factory=list)
    history: list[Ran] = field(default_factory=list)
    hung: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    repaired_in_turn: int = 0
    durations: list[float] = field(default_factory=list)  # seconds per turn, unkilled

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def work(self) -> Path:
        return self.root / "work"

    def env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("OPENAI_", "DEEPSEEK_", "TETHER_", "PYTHON"))
        }
        env.update(
            PYTHONPATH=str(SRC),
            OPENAI_BASE_URL=self.base_url,
            OPENAI_MODEL="scripted",
            TETHER_HOME=str(self.home),
            HOME=str(self.root / "user"),
            NO_COLOR="1",
            COLUMNS="100",
            SOAK_RUN=self.marker,
        )
        return env

    def prepare(self) -> None:
        self.work.mkdir(parents=True)
        (self.root / "user").mkdir()
        (self.work / "notes.txt").write_text("hello from the workspace\n" * 40)
        (self.work / "out").mkdir()
        hooks = self.work / ".claude" / "hooks"
        hooks.mkdir(parents=True)
        (hooks / "pre.sh").write_text(HOOK)
        (hooks / "pre.sh").chmod(0o755)
        command = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/pre.sh'
        settings = {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
                ]
            }
        }
        (self.work / ".claude" / "settings.json").write_text(json.dumps(settings))

    def sessions(self) -> list[str]:
        root = self.home / "sessions"
        if not root.is_dir():
            return []
        return sorted(p.parent.name for p in root.glob("*/session.jsonl"))

    async def tether(
        self, *args: str, stdin: bytes | None = None, kill_after: float | None = None
    ) -> Outcome:
        """Run `tether *args`; SIGKILL it after `kill_after` seconds if it still runs."""
        began = time.monotonic()
        stamp = now_ticks()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            CLI,
            *args,
            cwd=self.work,
            env=self.env(),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        self.processes += 1
        talk = asyncio.ensure_future(process.communicate(stdin))
        limit = HANG_S if kill_after is None else min(kill_after, HANG_S)
        done, _ = await asyncio.wait({talk}, timeout=limit)
        hung = False
        if not done:
            hung = kill_after is None or kill_after > HANG_S
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
        out, err = await talk
        seconds = time.monotonic() - began
        code = process.returncode
        if code == -signal.SIGKILL and not done:
            code = None
        outcome = Outcome(code, out.decode(errors="replace"), err.decode(errors="replace"), seconds)
        outcome.hung = hung
        self.history.append(Ran(args, stamp, now_ticks(), code is None))
        if hung:
            self.hung.append(f"tether {' '.join(args)}")
        return outcome

    def sweep_check(self, after: str) -> None:
        """After a command that ran to its end: count (and stop) the orphans still alive."""
        for found in ours(self.marker):
            spawner = [r for r in self.history if r.began <= found.started <= r.ended + 1]
            origin = " / ".join(
                f"{'killed ' if r.killed else ''}`tether {' '.join(r.args)[:60]}`" for r in spawner
            )
            self.orphans.append(
                (
                    found.pid,
                    f"{found.argv} (ppid {found.ppid}, pgid {found.pgid}, sid {found.sid};"
                    f" started {now_ticks() - found.started:.1f} s ago by {origin or '?'};"
                    f" alive after {after})",
                )
            )
            with contextlib.suppress(ProcessLookupError):
                os.kill(found.pid, signal.SIGKILL)

    def phase(self, session: str | None, known: set[str], before: int) -> str:
        """What the killed process was doing, from what it wrote to its session log (`before`:
        the records the log had when the process started)."""
        if session is None:
            fresh = set(self.sessions()) - known
            if not fresh:
                temps = list((self.home / "sessions").glob("*/.session.jsonl.*.tmp"))
                return "creating the session" if temps else "booting (no session yet)"
            session = sorted(fresh)[0]
        records = _records(self.home, session)
        if len(records) <= before:
            return "booting (nothing written yet)"
        mine = records[before:]
        calls = {r["data"].get("call_id") for r in mine if r.get("type") == "tool/call"}
        answered = set()
        for record in records:
            if record.get("type") == "tool/result":
                content = record["data"].get("message", {}).get("content", [])
                answered |= {c.get("call_id") for c in content if isinstance(c, dict)}
        last = records[-1].get("type")
        if calls - answered:
            return "a tool call running"
        if last in ("turn/end", "session"):
            return "between turns (boot or teardown)"
        if last in ("assistant/chunk", "step/start", "llm/retry-started"):
            return "model streaming"
        if last in ("request/header", "request/context"):
            return "waiting for the model"
        return f"after {last}"

    async def one_process(self, turns_left: int) -> None:
        """Start one tether process (run, run --resume, or chat) for one to four turns."""
        kind = self.rng.random()
        existing = self.sessions()
        resume = None
        if kind < 0.45 or not existing:
            mode, count = "run", 1
        elif kind < 0.75:
            mode, count, resume = "run", 1, self.rng.choice(existing)
        else:
            mode, count = "chat", min(turns_left, self.rng.randint(2, 4))
            if self.rng.random() < 0.5:
                resume = self.rng.choice(existing)
        prompts = []
        for _ in range(count):
            self.turns += 1
            turn = self.turns
            self.model.plans[turn] = plan_turn(turn, self.rng)
            prompts.append(f"please do soak-turn-{turn} now")
        self.planned += sum(self.rng.randrange(self.kill_one_in) == 0 for _ in range(count))
        per_turn = statistics.median(self.durations) if self.durations else 3.0
        kill_after = self.rng.uniform(0.0, per_turn * count) if self.planned > self.kills else None
        known = set(existing)
        before = len(_records(self.home, resume)) if resume else 0
        if mode == "run":
            args = ["run", "--yolo", *(("--resume", resume) if resume else ()), prompts[0]]
            outcome = await self.tether(*args, kill_after=kill_after)
        else:
            args = ["chat", "--yolo", *(("--resume", resume) if resume else ())]
            stdin = "".join(f"{p}\n" for p in prompts) + "/exit\n"
            outcome = await self.tether(*args, stdin=stdin.encode(), kill_after=kill_after)
        if outcome.code is None and not outcome.hung:
            self.kills += 1
            self.phases[self.phase(resume, known, before)] += 1
            return
        if "repaired the session log" in outcome.stderr:
            self.repaired_in_turn += 1
        if outcome.code not in (0, None):
            self.failures.append(f"tether {' '.join(args)} -> {outcome.code}: {outcome.stderr}")
        self.durations.append(outcome.seconds / count)
        self.sweep_check(f"`tether {mode}`")

    async def finish(self) -> dict[str, object]:
        """The last boot, then check/resume/check over every session."""
        booted = await self.tether("tools", "list")
        if booted.code != 0:
            self.failures.append(f"tools list -> {booted.code}: {booted.stderr}")
        self.sweep_check("the final `tether tools list`")
        first = await self.tether("sessions", "check")
        flagged: dict[str, str] = {}
        for line in first.stdout.splitlines():
            sid, _, rest = line.partition(": ")
            if line.startswith("run `tether sessions "):
                remedy, sid = line.split()[3], line.split()[4].rstrip("`")
                flagged[sid] = remedy
            elif rest != "ok" and sid and not line.startswith("run "):
                flagged.setdefault(sid, "resume")
        repaired = 0
        for sid, remedy in sorted(flagged.items()):
            if remedy == "repair":
                done = await self.tether("sessions", "repair", sid)
            else:
                done = await self.tether("sessions", "resume", sid, stdin=b"/exit\n")
                self.sweep_check("`tether sessions resume`")
            if done.code == 0:
                repaired += 1
            else:
                self.failures.append(f"sessions {remedy} {sid} -> {done.code}: {done.stderr}")
        second = await self.tether("sessions", "check")
        unbalanced = [line for line in second.stdout.splitlines() if not line.endswith(": ok")]
        sessions = self.sessions()
        temps = list((self.home / "sessions").glob("*/.session.jsonl.*.tmp"))
        ledgers = list((self.home / "run").glob("*.groups"))
        return {
            "sessions": len(sessions),
            "flagged": len(flagged),
            "repaired": repaired,
            "unbalanced": unbalanced,
            "temps": len(temps),
            "ledgers": len(ledgers),
            "turn_starts": sum(_count(self.home, sid, "turn/start") for sid in sessions),
            "interrupted": sum(_interrupted(self.home, sid) for sid in sessions),
        }


def _records(home: Path, sid: str) -> list[dict[str, Any]]:
    path = home / "sessions" / sid / "session.jsonl"
    found = []
    with contextlib.suppress(OSError):
        for line in path.read_bytes().splitlines():
            with contextlib.suppress(ValueError):
                found.append(json.loads(line))
    return found


def _count(home: Path, sid: str, kind: str) -> int:
    return sum(1 for r in _records(home, sid) if r.get("type") == kind)


def _interrupted(home: Path, sid: str) -> int:
    """Turns closed by crash repair in this session."""
    return sum(
        1
        for r in _records(home, sid)
        if r.get("type") == "turn/end" and r["data"].get("reason", {}).get("kind") == "interrupted"
    )


def _table(rows: Sequence[tuple[str, object]]) -> str:
    width = max(len(name) for name, _ in rows)
    values = [str(v) for _, v in rows]
    right = max(len(v) for v in values)
    lines = [f"| {'measure'.ljust(width)} | {'value'.rjust(right)} |"]
    lines.append(f"|{'-' * (width + 2)}|{'-' * (right + 1)}:|")
    lines += [
        f"| {n.ljust(width)} | {v.rjust(right)} |" for (n, _), v in zip(rows, values, strict=True)
    ]
    return "\n".join(lines)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument(
        "--kill-one-in", type=int, default=KILL_ONE_IN, help="kill each turn with chance 1/N"
    )
    options = parser.parse_args()
    seed = options.seed if options.seed is not None else random.randrange(2**32)
    root = Path(tempfile.mkdtemp(prefix="tether-soak-"))
    model = Model()
    began = time.monotonic()
    async with ScriptedModelServer(fallback=model.respond) as server:
        soak = Soak(root, random.Random(seed), model, server.base_url, options.kill_one_in)
        soak.prepare()
        print(
            f"soak: {options.turns} turns, seed {seed}, in {root}; {platform.python_version()},"
            f" {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        while soak.turns < options.turns:
            await soak.one_process(options.turns - soak.turns)
            if soak.processes % 25 == 0:
                print(
                    f"  {soak.turns} turns, {soak.processes} processes, {soak.kills} kills,"
                    f" {len(soak.orphans)} orphans, {time.monotonic() - began:.0f} s",
                    flush=True,
                )
        result = await soak.finish()
    minutes = (time.monotonic() - began) / 60
    unbalanced = result["unbalanced"]
    assert isinstance(unbalanced, list)
    rows: list[tuple[str, object]] = [
        ("turns (prompts sent)", soak.turns),
        ("turns started (turn/start records)", result["turn_starts"]),
        ("tether processes", soak.processes),
        ("sessions", result["sessions"]),
        (f"kills drawn (1 in {soak.kill_one_in} turns)", soak.planned),
        ("kills (SIGKILL)", soak.kills),
        *((f"  kills: {phase}", n) for phase, n in sorted(soak.phases.items())),
        ("sessions `check` flagged", result["flagged"]),
        ("repaired by `sessions resume`/`repair`", result["repaired"]),
        ("turns closed by crash repair (all)", result["interrupted"]),
        ("unbalanced after check/resume (must be 0)", len(unbalanced)),
        ("orphans after the next boot (must be 0)", len(soak.orphans)),
        ("temp files / ledgers left", f"{result['temps']} / {result['ledgers']}"),
        ("commands hung", len(soak.hung)),
        ("unexpected exit codes", len(soak.failures)),
        ("wall time (min)", f"{minutes:.1f}"),
    ]
    print(_table(rows))
    for line in unbalanced:
        print(f"unbalanced: {line}")
    for pid, argv in soak.orphans:
        print(f"orphan: pid {pid}: {argv}")
    for line in soak.hung:
        print(f"hung: {line}")
    for line in soak.failures[:20]:
        print(f"exit: {line.strip()}")
    if options.keep:
        print(f"kept {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if unbalanced or soak.orphans or soak.hung else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

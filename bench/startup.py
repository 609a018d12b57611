"""Startup of the command line: wall clock from exec, beside the bare interpreter in the same run.

Run: `python bench/startup.py [--rounds N]`. Each case is a fresh process of this Python's
`tether` script (the console script next to `sys.executable`; this checkout's `src` when it is
an editable install), with a throwaway `TETHER_HOME`, workspace and `HOME`. The cases run
interleaved, round by round, so the load of a shared machine falls on all of them alike.

- `python -c pass`: the bare interpreter (the gauge; `-c pass` of the same executable).
- `python -c "import asyncio, ssl"`: the floor of any Python CLI that talks HTTPS with asyncio.
- `tether --help`, `tether tools list`, `tether tools call run_code` (`print(1)`): exec → exit.
- `tether run` → first model request: exec → the moment a local OpenAI-compatible server (a
  thread of this process, on 127.0.0.1) has read the request's headers. The server answers
  with one text chunk and the run ends; `tether run` → exit is printed too.

Reported per case: the median and the minimum wall time in ms, the median CPU time (user + sys
of the child at exit, `os.wait4`; for `tether run`, what it had used when its request arrived,
from `/proc/<pid>/task/*/schedstat`: a loaded machine inflates CPU time far less than the wall
clock), and the ratios of the medians to the bare interpreter's (wall and CPU). Targets
(issue 36, a quiet machine): `tether run` → first request ≤ 250 ms, `tether tools list`
≤ 150 ms, `tether --help` ≤ 30 ms (issue 27 §1 had 300 / 250 / 50). Then the whole one-turn
run's exit time and its peak resident set size (`ru_maxrss` at exit; target ≤ 60 MB), the load
average before and after, and which heavy modules (`-X importtime`) each command imported
before it was done.

`--instructions` counts instead, once per case under valgrind's callgrind (the `tether run` case
dumped by `callgrind_control` when its request arrives): instruction counts do not move with the
load of a shared machine (wall and CPU time move by 2–3×), so they compare two builds fairly.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PEAK_RSS_MB = 60
"""Issue 36: a one-turn `tether run` stays within this peak resident set size."""

HEAVY = ("openai", "httpx", "httpx2", "pydantic", "rich.markdown", "yaml", "ssl", "cyclopts")


def cpu_ms_so_far(pid: int) -> float | None:
    """The CPU time a live process has used so far, every thread (Linux: `schedstat`, in ns)."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as file:
                total += int(file.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e6


class _Model(BaseHTTPRequestHandler):
    """An OpenAI-compatible `/chat/completions` that stamps when a request's headers arrived
    (and how much CPU the process `client` names had used by then)."""

    arrivals: list[float]  # set on the subclass made per run
    cpu_at_arrival: list[float]
    client: list[int]  # the pid of the process under test

    dump: list[bool]  # [True]: dump the client's callgrind counts before answering

    def do_POST(self) -> None:
        self.arrivals.append(time.perf_counter())
        if self.client and (used := cpu_ms_so_far(self.client[0])) is not None:
            self.cpu_at_arrival.append(used)
        if self.client and self.dump:
            subprocess.run(
                ["callgrind_control", "--dump", str(self.client[0])],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )
        self.rfile.read(int(self.headers.get("content-length", "0")))
        chunk = {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "bench",
            "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}],
        }
        body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass
class Case:
    label: str
    args: list[str]
    target_ms: float | None = None
    first_request: bool = False  # time exec → the model server saw the request
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    exits: list[float] = field(default_factory=list)
    peaks: list[float] = field(default_factory=list)  # peak RSS at exit, MB


_PRINT_1 = '{"code": "print(1)", "description": "x"}'
"""`tether tools call run_code`'s arguments (tests/cli/test_exit.py runs 200 such calls)."""


def _tether() -> list[str]:
    script = Path(sys.executable).with_name("tether")
    if script.exists():
        return [str(script)]
    cli = "import sys; sys.argv[0] = 'tether'; from tether.cli.app import run; run()"
    return [sys.executable, "-c", cli]


def _env(root: Path, base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "PYTHON"))}
    env.update(
        TETHER_HOME=str(root / "home"),
        HOME=str(root / "user"),
        OPENAI_BASE_URL=base_url,
        OPENAI_MODEL="bench",
        COLUMNS="100",
        NO_COLOR="1",
    )
    env.pop("OPENAI_API_KEY", None)
    return env


@dataclass
class ServerState:
    """What the model server saw: request arrival times, the client's CPU by then."""

    arrivals: list[float] = field(default_factory=list)
    cpu_at_arrival: list[float] = field(default_factory=list)
    client: list[int] = field(default_factory=list)
    dump: list[bool] = field(default_factory=list)


def start_model_server(state: ServerState) -> tuple[ThreadingHTTPServer, str]:
    """A model server on 127.0.0.1 in a thread of this process, and its base URL."""
    shared = {"arrivals": state.arrivals, "cpu_at_arrival": state.cpu_at_arrival}
    handler = type("Model", (_Model,), {**shared, "client": state.client, "dump": state.dump})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def _once(case: Case, *, cwd: Path, env: dict[str, str], server: ServerState) -> None:
    server.arrivals.clear()
    server.cpu_at_arrival.clear()
    server.client.clear()
    started = time.perf_counter()
    process = subprocess.Popen(
        case.args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    server.client.append(process.pid)
    assert process.stderr is not None
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    ended = time.perf_counter()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{case.label}: exited {code}: {err.decode()[-600:]}")
    if case.first_request:
        if not server.arrivals or not server.cpu_at_arrival:
            raise SystemExit(f"{case.label}: the model server saw no request")
        case.walls.append((server.arrivals[0] - started) * 1000)
        case.cpus.append(server.cpu_at_arrival[0])
    else:
        case.walls.append((ended - started) * 1000)
        case.cpus.append((usage.ru_utime + usage.ru_stime) * 1000)
    case.exits.append((ended - started) * 1000)
    case.peaks.append(usage.ru_maxrss / 1024)  # KiB on Linux


def _imported(case: Case, *, cwd: Path, env: dict[str, str]) -> list[str]:
    """The HEAVY modules a run of the case imported (from `-X importtime`)."""
    args = case.args
    if args[0] != sys.executable:  # the console script: run it through this interpreter
        args = [sys.executable, *args]
    done = subprocess.run(
        [args[0], "-X", "importtime", *args[1:]],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    return [name for name in HEAVY if name in names]


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f} (1 min), {five:.2f} (5 min)"


def instructions(cases: list[Case], *, cwd: Path, env: dict[str, str], state: ServerState) -> None:
    """Each case once under callgrind; print the instructions (to the request for `run`)."""
    state.dump.append(True)
    rows: list[tuple[str, int]] = []
    with tempfile.TemporaryDirectory() as out:
        for case in cases:
            args = case.args if case.args[0] == sys.executable else [sys.executable, *case.args]
            stem = Path(out) / case.label.split()[1 if case.label.startswith("tether") else 0]
            state.client.clear()
            process = subprocess.Popen(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={stem}.%p", *args],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            state.client.append(process.pid)
            if process.wait() != 0:
                raise SystemExit(f"{case.label}: exited {process.returncode} under valgrind")
            dumps = sorted(Path(out).glob(f"{stem.name}.{process.pid}*"))
            # the dump at the request is `<stem>.<pid>.1`; the one at exit is `<stem>.<pid>`
            chosen = [d for d in dumps if d.name.endswith(".1")] if case.first_request else dumps
            summary = next(
                line for line in chosen[0].read_text().splitlines() if line.startswith("summary:")
            )
            rows.append((case.label, int(summary.split()[1])))
    bare = rows[0][1]
    print("| case                       | instructions | × bare |")
    print("|----------------------------|-------------:|-------:|")
    for label, count in rows:
        print(f"| {label:<26} | {count:12,} | {count / bare:5.1f}× |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--instructions", action="store_true")
    options = parser.parse_args()
    rounds = options.rounds
    state = ServerState()
    server, base_url = start_model_server(state)
    tether = _tether()
    cases = [
        Case("python -c pass", [sys.executable, "-c", "pass"]),
        Case("python: import asyncio, ssl", [sys.executable, "-c", "import asyncio, ssl"]),
        Case("tether --help", [*tether, "--help"], 30.0),
        Case("tether tools list", [*tether, "tools", "list"], 150.0),
        Case("tether run → 1st request", [*tether, "run", "hi"], 250.0, first_request=True),
        Case("tether tools call run_code", [*tether, "tools", "call", "run_code", _PRINT_1]),
    ]
    load_before = _load()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        work = root / "work"
        work.mkdir()
        env = _env(root, base_url)
        if options.instructions:
            for case in cases:  # warm: .pyc files
                _once(case, cwd=work, env=env, server=state)
            print(f"{platform.python_implementation()} {platform.python_version()}; callgrind\n")
            instructions(cases, cwd=work, env=env, state=state)
            server.shutdown()
            return
        for case in cases:  # warm: .pyc files, the page cache
            _once(case, cwd=work, env=env, server=state)
            case.walls.clear(), case.cpus.clear(), case.exits.clear(), case.peaks.clear()
        for _ in range(rounds):
            for case in cases:
                _once(case, cwd=work, env=env, server=state)
        heavy = {case.label: _imported(case, cwd=work, env=env) for case in cases[1:]}
    server.shutdown()
    load_after = _load()

    bare = statistics.median(cases[0].walls)
    print(
        f"{os.cpu_count()} CPUs, {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}; {rounds} rounds, interleaved; load average before "
        f"{load_before}, after {load_after}\n"
    )
    print(
        "| case                       | median ms | min ms | × bare | CPU ms | × bare | target"
        "   | met |\n"
        "|----------------------------|----------:|-------:|-------:|-------:|-------:|----------"
        "|:---:|"
    )
    bare_cpu = statistics.median(cases[0].cpus)
    for case in cases:
        mid = statistics.median(case.walls)
        cpu = statistics.median(case.cpus)
        goal = "" if case.target_ms is None else f"≤ {case.target_ms:.0f} ms"
        met = "" if case.target_ms is None else ("yes" if mid <= case.target_ms else "no")
        print(
            f"| {case.label:<26} | {mid:9.0f} | {min(case.walls):6.0f} | {mid / bare:5.1f}× | "
            f"{cpu:6.0f} | {cpu / bare_cpu:5.1f}× | {goal:<8} | {met:^3} |"
        )
    run = next(case for case in cases if case.first_request)
    print(
        f"\n`tether run` exec → exit (the whole one-turn run, session log closed): median "
        f"{statistics.median(run.exits):.0f} ms, peak RSS median "
        f"{statistics.median(run.peaks):.1f} MB (target ≤ {PEAK_RSS_MB} MB)"
    )
    for label, found in heavy.items():
        print(f"{label} imported: {', '.join(found) if found else 'none'} (of {', '.join(HEAVY)})")


if __name__ == "__main__":
    main()

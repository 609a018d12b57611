"""Startup cost of the command line, as CPU time, beside the bare interpreter in the same run.

Run: `python bench/startup.py [--rounds N]`. Each case runs as a fresh subprocess of this Python
(with this checkout's `src` first on `PYTHONPATH`, a throwaway `TETHER_HOME`, workspace and
`HOME`), ROUNDS times; the CPU time of one run is the child's user + system time (`os.wait4`), so
a loaded machine slows the wall clock but barely the numbers. Reported: the minimum and the
median per case, and the minimum over the bare interpreter's minimum (`python -c pass`).

Targets (issue 12 §3), over the bare interpreter: `import tether` ≤ 100 ms, `tether --help`
≤ 150 ms, `tether tools list` ≤ 400 ms. Also printed: whether `import tether` or `tether --help`
imported `openai`, `httpx`, `httpx2` or `rich.markdown` (they must not).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
CLI = "import sys; sys.argv[0] = 'tether'; from tether.cli.app import run; run()"
HEAVY = ("openai", "httpx", "httpx2", "rich.markdown")

CASES: list[tuple[str, list[str], float | None]] = [
    ("python -c pass", ["-c", "pass"], None),
    ("import tether", ["-c", "import tether"], 100.0),
    ("tether --help", ["-c", CLI, "--help"], 150.0),
    ("tether run --help", ["-c", CLI, "run", "--help"], None),
    ("tether tools list", ["-c", CLI, "tools", "list"], 400.0),
]


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "PYTHON"))}
    env.update(
        PYTHONPATH=str(SRC),
        TETHER_HOME=str(root / "home"),
        HOME=str(root / "user"),
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        OPENAI_MODEL="bench",
        COLUMNS="100",
    )
    return env


def cpu_ms(args: list[str], *, cwd: Path, env: dict[str, str]) -> float:
    """One run's user + system CPU time in ms (it must exit 0)."""
    process = subprocess.Popen(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{args} exited {process.returncode}: {err.decode()[-400:]}")
    return (usage.ru_utime + usage.ru_stime) * 1000


def imported_heavy(args: list[str], *, cwd: Path, env: dict[str, str]) -> list[str]:
    """The HEAVY modules a run imported (from `-X importtime`)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    return sorted(name for name in names if name in HEAVY)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        work = root / "work"
        work.mkdir()
        env = _env(root)
        rows: list[tuple[str, float, float, float | None]] = []
        for label, args, target in CASES:
            cpu_ms(args, cwd=work, env=env)  # warm: .pyc files, page cache
            times = [cpu_ms(args, cwd=work, env=env) for _ in range(rounds)]
            rows.append((label, min(times), statistics.median(times), target))
        heavy = {
            label: imported_heavy(args, cwd=work, env=env)
            for label, args, _ in CASES
            if label in ("import tether", "tether --help")
        }
    bare = rows[0][1]
    cpus = os.cpu_count()
    print(
        f"{cpus} CPUs, {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}; {rounds} rounds; CPU ms (user + sys)\n"
    )
    print(f"| {'case':<19} | {'min':>6} | {'median':>6} | {'over bare':>9} | target  | met |")
    print(f"|{'-' * 21}|{'-' * 8}|{'-' * 8}|{'-' * 11}|---------|-----|")
    for label, low, mid, target in rows:
        over = low - bare
        goal = "" if target is None else f"≤ {target:.0f}"
        met = "" if target is None else ("yes" if over <= target else "no")
        print(f"| {label:<19} | {low:6.0f} | {mid:6.0f} | {over:9.0f} | {goal:<7} | {met:<3} |")
    print()
    for label, found in heavy.items():
        print(f"{label} imported {', '.join(found) if found else 'none of ' + ', '.join(HEAVY)}")


if __name__ == "__main__":
    main()

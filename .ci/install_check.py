"""The clean-install check: tether as a user gets it, not as the checkout runs it.

`./dev test` runs it beside the pytest runs (and so does CI). It builds the sdist and the wheel
with `python -m build` (the wheel from the sdist, so a file missing from the sdist fails here),
checks what the wheel carries (`py.typed`, the licence, the `tether` console script, the
`tether.plugins` entry points, the version from `tether.__version__`, the extras), installs the
wheel into a fresh venv that has no dev tools (its own pip, the shared pip cache and the locked
versions as constraints; the registries are the only network) and runs `tether --version`,
`tether tools list` and `tether demo` there, with a throwaway HOME and nothing of the checkout on
the path. Exit 0 iff every step passed; a failure prints the step's output.

Run: `.venv/bin/python .ci/install_check.py [--keep DIR]`.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = {"all", "chat", "code-mode", "mcp", "temporal", "temporal-s3"}


class CheckFailed(Exception):
    pass


def version() -> str:
    text = (ROOT / "src" / "tether" / "__init__.py").read_text()
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if found is None:
        raise CheckFailed('src/tether/__init__.py has no `__version__ = "..."` line')
    return found.group(1)


def run(args: list[str | Path], *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        shown = " ".join(str(a) for a in args)
        raise CheckFailed(f"`{shown}` exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout


def check_wheel(wheel: Path, sdist: Path, expected: str) -> None:
    info = f"tether-{expected}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"{info}/METADATA").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    missing = {"tether/py.typed", f"{info}/licenses/LICENSE", "tether/cli/app.py"} - names
    if missing:
        raise CheckFailed(f"the wheel lacks {sorted(missing)}")
    if f"\nVersion: {expected}\n" not in metadata:
        raise CheckFailed(f"the wheel's METADATA does not say Version: {expected}")
    extras = set(re.findall(r"^Provides-Extra: (\S+)$", metadata, re.MULTILINE))
    if extras != EXTRAS:
        raise CheckFailed(f"the wheel's extras are {sorted(extras)}, not {sorted(EXTRAS)}")
    if "tether = tether.cli.app:run" not in entry_points or "[tether.plugins]" not in entry_points:
        raise CheckFailed(f"the wheel's entry points lack the script or plugins:\n{entry_points}")
    with tarfile.open(sdist) as archive:
        members = {m.name.split("/", 1)[-1] for m in archive.getmembers()}
    if not {"LICENSE", "pyproject.toml", "src/tether/py.typed"} <= members:
        raise CheckFailed("the sdist lacks LICENSE, pyproject.toml or src/tether/py.typed")


def clean_env(root: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TETHER_", "PYTHON", "OPENAI_", "VIRTUAL_ENV"))
    }
    env.update(HOME=str(root / "home"), NO_COLOR="1", COLUMNS="100")
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    options = parser.parse_args()
    expected = version()
    with tempfile.TemporaryDirectory(prefix="tether-install-") as tmp:
        root = (options.keep or Path(tmp)).resolve()
        dist, venv, work = root / "dist", root / "venv", root / "work"
        for folder in (dist, work, root / "home"):
            folder.mkdir(parents=True, exist_ok=True)
        steps: list[tuple[str, float]] = []
        started = time.monotonic()

        def step(label: str) -> None:
            nonlocal started
            now = time.monotonic()
            steps.append((label, now - started))
            started = now

        try:
            run([sys.executable, "-m", "build", "--outdir", dist, ROOT])
            wheel = dist / f"tether-{expected}-py3-none-any.whl"
            sdist = dist / f"tether-{expected}.tar.gz"
            check_wheel(wheel, sdist, expected)
            step("build sdist + wheel, check contents")
            run([sys.executable, "-m", "venv", venv])  # with its own pip, as a user's has
            pip = [venv / "bin" / "python", "-m", "pip", "--disable-pip-version-check"]
            run(
                [
                    *pip,
                    "install",
                    "--quiet",
                    "-c",
                    ROOT / "requirements-dev.lock",
                    wheel,
                ]
            )
            step("install the wheel into a clean venv")
            env = clean_env(root)
            python, tether = venv / "bin" / "python", venv / "bin" / "tether"
            where = run([python, "-c", "import tether; print(tether.__file__)"], cwd=work, env=env)
            if not where.startswith(str(venv)):
                raise CheckFailed(f"`import tether` found {where.strip()}, not the venv's")
            probe = "import importlib.util as u; print(u.find_spec('pytest'))"
            if run([python, "-c", probe], cwd=work, env=env).strip() != "None":
                raise CheckFailed("the clean venv has pytest: dev tools leaked into it")
            shown = run([tether, "--version"], cwd=work, env=env).strip()
            if not re.fullmatch(rf"tether {re.escape(expected)} \(\w+ 3\.\d+\.\S+\)", shown):
                raise CheckFailed(f"`tether --version` printed {shown!r}")
            if "bash" not in run([tether, "tools", "list"], cwd=work, env=env):
                raise CheckFailed("`tether tools list` did not list bash")
            out = run([tether, "demo"], cwd=work, env=env)
            if not re.search(r"^\S+: ok$", out, re.MULTILINE):
                raise CheckFailed(f"`tether demo` did not end with a clean sessions check:\n{out}")
            step("tether --version, tools list, demo in the clean venv")
        except (CheckFailed, subprocess.TimeoutExpired) as failure:
            print(f"install check FAILED: {failure}")
            return 1
    print(f"install check passed: tether {expected} wheel + sdist")
    for label, seconds in steps:
        print(f"  {seconds:5.1f} s  {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

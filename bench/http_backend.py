"""What the model client's first HTTP request imports, and what a network backend could save.

Run: `python bench/http_backend.py [--rounds N]`. Each case runs in a fresh interpreter that has
already imported `asyncio` and `ssl` (as `tether run` has by then), serves one HTTP/1.1 response
on 127.0.0.1 and sends one request to it:

  * `httpx2 client`    — `httpx2.AsyncClient().get(...)`, what the OpenAI adapter does today;
  * `pool, anyio`      — `httpcore2.AsyncConnectionPool()` with its default backend (under
                         asyncio httpcore2's `AutoBackend` picks `AnyIOBackend`);
  * `pool, asyncio`    — the same pool given an asyncio-streams `AsyncNetworkBackend` (below:
                         public httpcore2 API only), the candidate for issue 36.

For each it prints the modules the request added, per top-level package, the dataclasses they
define, and their import cost: the sum of `-X importtime` self µs over those modules, measured by
importing each of them by statement in a second fresh interpreter (median of `--rounds`). Two
passes because anyio imports its submodules through `importlib.import_module` (its lazy
`__getattr__`), which `-X importtime` does not report. The last lines print the modules only the
anyio backend adds (the saving a custom backend could buy) and the same with `h2` and `sniffio`
blocked, which is what an install without tether's dev group has (both come only from it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

PACKAGES = (
    "httpx2",
    "httpcore2",
    "anyio",
    "sniffio",
    "h11",
    "h2",
    "hpack",
    "hyperframe",
    "idna",
    "truststore",
    "certifi",
)

CHILD = r"""
import asyncio, json, ssl, sys
for name in BLOCKED:
    sys.modules[name] = None  # simulates an install without it (bench only)

RESPONSE = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"


async def serve(reader, writer):
    await reader.readuntil(b"\r\n\r\n")
    writer.write(RESPONSE)
    await writer.drain()
    writer.close()


def asyncio_backend():
    import httpcore2

    class Stream(httpcore2.AsyncNetworkStream):
        def __init__(self, reader, writer):
            self.reader, self.writer = reader, writer

        async def read(self, max_bytes, timeout=None):
            return await asyncio.wait_for(self.reader.read(max_bytes), timeout)

        async def write(self, buffer, timeout=None):
            self.writer.write(buffer)
            await asyncio.wait_for(self.writer.drain(), timeout)

        async def aclose(self):
            self.writer.close()

        def get_extra_info(self, info):
            return None

    class Backend(httpcore2.AsyncNetworkBackend):
        async def connect_tcp(self, host, port, timeout=None, local_address=None,
                              socket_options=None):
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
            return Stream(reader, writer)

        async def sleep(self, seconds):
            await asyncio.sleep(seconds)

    return Backend()


async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    before = set(sys.modules)
    if CASE == "httpx2 client":
        import httpx2

        async with httpx2.AsyncClient() as client:
            assert (await client.get(url)).status_code == 200
    else:
        import httpcore2

        backend = asyncio_backend() if CASE == "pool, asyncio" else None
        async with httpcore2.AsyncConnectionPool(network_backend=backend) as pool:
            assert (await pool.request("GET", url)).status == 200
    server.close()
    added = sorted(set(sys.modules) - before)
    print(json.dumps(added))


asyncio.run(main())
"""


def _added(case: str, blocked: tuple[str, ...]) -> list[str]:
    code = f"CASE = {case!r}\nBLOCKED = {blocked!r}\n" + CHILD
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    added: list[str] = json.loads(done.stdout)
    return added


def _self_us(modules: list[str], blocked: tuple[str, ...]) -> dict[str, int]:
    """Sum of -X importtime self µs per top-level package, each module imported by statement."""
    wanted = [m for m in modules if m.split(".")[0] in PACKAGES]
    lines = [
        f"import sys\nfor name in {blocked!r}: sys.modules[name] = None",
        "import asyncio, ssl",
    ]
    lines += [f"import {m}" for m in wanted]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "\n".join(lines)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    total: dict[str, int] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = line[len("import time:") :].split("|")
        top = name.strip().split(".")[0]
        if name.strip() in wanted:
            total[top] = total.get(top, 0) + int(self_us)
    return total


def _dataclasses(modules: list[str], blocked: tuple[str, ...]) -> dict[str, int]:
    code = (
        f"import sys, dataclasses, json\nfor name in {blocked!r}: sys.modules[name] = None\n"
        f"import asyncio, ssl\nmods = {modules!r}\nseen = {{}}\n"
        "for m in mods:\n"
        "    top = m.split('.')[0]\n"
        "    if top not in " + repr(PACKAGES) + ": continue\n"
        "    module = __import__(m, fromlist=['_'])\n"
        "    for v in list(vars(module).values()):\n"
        "        if isinstance(v, type) and dataclasses.is_dataclass(v)"
        " and v.__module__.split('.')[0] == top:\n"  # anyio renames re-exports to `anyio`
        "            seen.setdefault(top, set()).add(id(v))\n"
        "print(json.dumps({top: len(ids) for top, ids in seen.items()}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    counted: dict[str, int] = json.loads(done.stdout)
    return counted


def _report(case: str, blocked: tuple[str, ...], rounds: int) -> list[str]:
    added = _added(case, blocked)
    costs = [_self_us(added, blocked) for _ in range(rounds)]
    classes = _dataclasses(added, blocked)
    print(f"\n{case}" + (f" (blocked: {', '.join(blocked)})" if blocked else ""))
    print(f"  modules added by the request: {len(added)}")
    print(f"  {'package':<11} {'modules':>7} {'dataclasses':>11} {'self ms (median)':>16}")
    total = 0.0
    for package in PACKAGES:
        count = sum(1 for m in added if m.split(".")[0] == package)
        ms = statistics.median(c.get(package, 0) for c in costs) / 1000
        total += ms
        if count:
            print(f"  {package:<11} {count:>7} {classes.get(package, 0):>11} {ms:>16.1f}")
    print(f"  {'total':<11} {'':>7} {sum(classes.values()):>11} {total:>16.1f}")
    return added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    print(f"CPython {sys.version.split()[0]}")
    _report("httpx2 client", (), rounds)
    for blocked in ((), ("h2", "sniffio")):
        anyio = _report("pool, anyio", blocked, rounds)
        native = _report("pool, asyncio", blocked, rounds)
        only = sorted(set(anyio) - set(native))
        suffix = " (blocked h2, sniffio)" if blocked else ""
        print(f"\n  modules only the anyio backend adds{suffix}:")
        print(f"    {only or 'none'}")


if __name__ == "__main__":
    main()

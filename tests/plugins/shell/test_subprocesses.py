"""Contract of the subprocess layer (spec §3.4), with real processes — as it runs where namespaces
cannot be created (the fallback; every test is `uncontained`). The contained layer, where the
kernel ends a command's processes, is `test_containment.py`.

- A process runs in its own process group; terminating it sends SIGTERM to the group and to
  descendants that escaped it (found by the tag in their environment), then, after `grace_ms`,
  SIGKILL to the survivors: nothing survives, not even a tree that ignores SIGTERM.
- Settlement does not wait forever for a descendant that keeps the output pipes open: `grace_ms`
  after the leader exits the process settles; the lingering group, or a descendant that escaped
  it, stays owned by the service, and closing the service kills it. A group seen gone is never
  signalled again.
- The child environment drops credential-shaped variables unless passed explicitly.
- stdin is the given data (then EOF) or /dev/null.
- Output is kept as a byte-exact tail per stream; the full stream goes to a private 0600 spill
  file up to the spill cap; output that is not UTF-8 decodes with replacement characters.
- Spawning checks its arguments and refuses an already aborted signal, naming the reason.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tether.core.signals import AbortController, AbortSignal
from tether.plugins.shell import ShellError, SpawnAbortedError, SubprocessService
from tether.plugins.shell._collect import CaptureLimits
from tether.plugins.shell._process import ExitStatus, SpawnSpec, Subprocess

from ._support import alive, pids, until

pytestmark = pytest.mark.usefixtures("uncontained")  # the fallback (no namespaces)

GRACE_MS = 200
CAP = CaptureLimits(64_000, 1_000_000)


def bash(
    command: str,
    *,
    env: dict[str, str | None] | None = None,
    stdin: bytes | None = None,
    stdout: CaptureLimits = CAP,
) -> SpawnSpec:
    return SpawnSpec(
        argv=("bash", "-c", command),
        cwd=os.getcwd(),
        env=env or {},
        stdin=stdin,
        stdout=stdout,
        stderr=CAP,
        grace_ms=GRACE_MS,
    )


async def run(service: SubprocessService, spec: SpawnSpec) -> tuple[Subprocess, ExitStatus]:
    process = await service.spawn(spec, signal=AbortSignal.never())
    return process, await process.settled()


async def test_the_leader_leads_its_own_process_group(service: SubprocessService) -> None:
    process, status = await run(service, bash("ps -o pgid= -p $$; echo $$"))
    pgid, pid = process.stdout.result().text.split()
    assert int(pgid) == int(pid) == process.pid
    assert status == ExitStatus(0, None)


async def test_a_tree_that_ignores_sigterm_is_gone_after_the_grace(
    service: SubprocessService, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    command = (
        f"trap '' TERM; echo $$ > {pidfile}; sleep 60 & echo $! >> {pidfile}; "
        f"setsid sleep 60 & echo $! >> {pidfile}; wait"
    )
    controller = AbortController()
    process = await service.spawn(bash(command), signal=controller.signal)
    await until(lambda: len(pids(pidfile)) == 3)
    leader, child, escaped = pids(pidfile)
    await until(lambda: os.getpgid(escaped) != process.pid)  # it left the group

    controller.abort()
    status = await process.settled()

    assert status == ExitStatus(None, "SIGKILL")
    assert process.stop_reason is controller.signal.reason
    assert [pid for pid in (leader, child, escaped) if alive(pid)] == []
    assert service.live == 0


async def test_a_tree_that_respects_sigterm_dies_without_sigkill(
    service: SubprocessService, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    controller = AbortController()
    process = await service.spawn(
        bash(f"sleep 60 & echo $! > {pidfile}; wait"), signal=controller.signal
    )
    await until(lambda: len(pids(pidfile)) == 1)

    controller.abort()
    status = await process.settled()

    assert status == ExitStatus(None, "SIGTERM")
    assert not alive(pids(pidfile)[0])


async def test_a_grandchild_holding_stdout_does_not_hang_settlement(
    service: SubprocessService,
) -> None:
    process, status = await run(service, bash("sleep 60 & echo $!; echo done"))
    lines = process.stdout.result().text.split()

    assert status == ExitStatus(0, None)
    assert lines[1] == "done"
    grandchild = int(lines[0])
    assert alive(grandchild)  # settlement does not kill it ...
    assert service.live == 1  # ... the service still owns its group

    await service.aclose()

    assert not alive(grandchild)
    assert service.live == 0


async def test_an_escaped_descendant_outliving_its_leader_is_killed_when_the_service_closes(
    service: SubprocessService,
) -> None:
    process, status = await run(service, bash("setsid sleep 60 > /dev/null & echo $!"))
    escaped = int(process.stdout.result().text)

    assert status == ExitStatus(0, None)
    assert alive(escaped)  # settlement does not kill it ...
    assert service.live == 1  # ... the service still owns it

    await service.aclose()

    assert not alive(escaped)
    assert service.live == 0


async def test_closing_the_service_kills_and_awaits_every_running_process(
    service: SubprocessService,
) -> None:
    first = await service.spawn(bash("sleep 60"), signal=AbortSignal.never())
    second = await service.spawn(bash("trap '' TERM; sleep 60"), signal=AbortSignal.never())

    await service.aclose()

    assert first.done.done()
    assert second.done.done()
    assert not alive(first.pid)
    assert not alive(second.pid)
    with pytest.raises(RuntimeError, match="closed"):
        await service.spawn(bash("true"), signal=AbortSignal.never())


async def test_a_group_seen_gone_is_never_signalled_again(service: SubprocessService) -> None:
    process, _ = await run(service, bash("exit 0"))

    assert process.group_gone()
    process.terminate()

    assert not process.terminating  # no escalation was started for a gone group


async def test_credential_shaped_variables_are_not_inherited(
    service: SubprocessService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_API_KEY", "k")
    monkeypatch.setenv("DB_PASSWORD", "p")
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("client_secret", "s")
    monkeypatch.setenv("TETHER_TEST_PLAIN", "plain")
    process, _ = await run(
        service, bash("env | cut -d= -f1 | grep -iE 'KEY|PASSWORD|TOKEN|SECRET|TETHER_TEST' | sort")
    )

    assert process.stdout.result().text == "TETHER_TEST_PLAIN\n"


async def test_explicit_env_wins_even_for_credential_names_and_none_removes(
    service: SubprocessService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_TEST_DROP", "inherited")
    process, _ = await run(
        service,
        bash(
            'echo "$MY_API_KEY|${TETHER_TEST_DROP-unset}"',
            env={"MY_API_KEY": "given", "TETHER_TEST_DROP": None},
        ),
    )

    assert process.stdout.result().text == "given|unset\n"


async def test_stdin_data_is_written_then_closed(service: SubprocessService) -> None:
    process, _ = await run(service, bash("cat; echo end", stdin=b"line one\nline two\n"))

    assert process.stdout.result().text == "line one\nline two\nend\n"


async def test_stdin_data_larger_than_the_pipe_buffer_is_written_completely(
    service: SubprocessService,
) -> None:
    process, _ = await run(service, bash("wc -c", stdin=b"x" * 1_000_000))

    assert process.stdout.result().text.strip() == "1000000"


async def test_without_stdin_data_the_child_reads_dev_null(service: SubprocessService) -> None:
    process, status = await run(service, bash("cat; readlink /proc/self/fd/0"))

    assert process.stdout.result().text == "/dev/null\n"
    assert status.exit_code == 0


async def test_stdin_the_child_never_reads_does_not_break_the_exit_code(
    service: SubprocessService,
) -> None:
    _, status = await run(service, bash("exit 7", stdin=b"x" * 1_000_000))

    assert status == ExitStatus(7, None)


async def test_output_over_the_cap_keeps_its_exact_tail_and_spills_everything(
    service: SubprocessService,
) -> None:
    process, _ = await run(
        service,
        bash("seq 1 20000", stdout=CaptureLimits(100, 1_000_000)),
    )
    full = "".join(f"{n}\n" for n in range(1, 20001))
    result = process.stdout.result()

    assert result.truncated
    assert result.text == full[-100:]
    assert result.spill_path is not None
    assert Path(result.spill_path).read_text() == full
    assert stat.S_IMODE(os.stat(result.spill_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(Path(result.spill_path).parent).st_mode) == 0o700


async def test_output_exactly_at_the_cap_is_not_truncated_and_has_no_spill(
    service: SubprocessService,
) -> None:
    process, _ = await run(service, bash("printf '%0100d' 0", stdout=CaptureLimits(100, 1000)))
    result = process.stdout.result()

    assert (result.text, result.truncated, result.spill_path) == ("0" * 100, False, None)


async def test_a_stream_over_the_spill_cap_keeps_its_tail_but_no_spill_file(
    service: SubprocessService,
) -> None:
    process, _ = await run(service, bash("seq 1 20000", stdout=CaptureLimits(10, 1000)))
    result = process.stdout.result()

    assert result.truncated
    assert result.text == "19999\n20000\n"[-10:]
    assert result.spill_path is None


async def test_output_that_is_not_utf8_is_decoded_with_replacement(
    service: SubprocessService,
) -> None:
    process, status = await run(service, bash(r"printf 'ok \xff\xfe end\n'; printf '\xc3' >&2"))

    assert status.exit_code == 0
    assert process.stdout.result().text == "ok \ufffd\ufffd end\n"
    assert process.stderr.result().text == "\ufffd"


async def test_spawning_with_an_aborted_signal_starts_nothing(service: SubprocessService) -> None:
    controller = AbortController()
    controller.abort("user pressed stop")

    with pytest.raises(SpawnAbortedError, match=r"^aborted before spawn: user pressed stop$"):
        await service.spawn(bash("true"), signal=controller.signal)
    assert service.live == 0


async def test_spawn_arguments_are_checked_with_clear_messages(
    service: SubprocessService,
) -> None:
    signal = AbortSignal.never()
    with pytest.raises(ValueError, match=r"^invalid argv: expected a non-empty program name"):
        await service.spawn(SpawnSpec(argv=(), cwd="/", stdout=CAP, stderr=CAP), signal=signal)
    with pytest.raises(
        ValueError,
        match=r"^subprocess grace_ms must be a positive finite number no greater than 2147483647$",
    ):
        await service.spawn(
            SpawnSpec(argv=("true",), cwd="/", stdout=CAP, stderr=CAP, grace_ms=0), signal=signal
        )


async def test_a_missing_working_directory_is_a_spawn_failure_naming_enoent(
    service: SubprocessService, tmp_path: Path
) -> None:
    missing = tmp_path / "missing"
    spec = SpawnSpec(argv=("bash", "-c", "true"), cwd=str(missing), stdout=CAP, stderr=CAP)

    with pytest.raises(ShellError) as caught:
        await service.spawn(spec, signal=AbortSignal.never())

    assert caught.value.code == "SHELL_SPAWN_FAILED"
    assert caught.value.message == f"spawn failed: ENOENT: No such file or directory: '{missing}'"

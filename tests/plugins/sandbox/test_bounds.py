"""What a sandboxed command may take (issue 32 item 7): the settings that spell the bounds, their
defaults, and the note for a result that reads like a bound was hit.

Contract: `tmp_size` (bytes or K/M/G/T, binary) defaults to 1 GiB or a quarter of RAM, whichever
is less; `max_processes` defaults to 1024 (null: none); nonsense is refused naming the key and a
valid spelling. A failed command whose output shows a refused fork (EAGAIN) names
`max_processes`; one that ran out of space names `tmp_size`; the kernel's own word (a cgroup's
`pids.events`) names the process bound for certain.
"""

from __future__ import annotations

import os

import pytest
from pydantic import ValidationError

from tether.plugins.sandbox.bounds import (
    DEFAULT_MAX_PROCESSES,
    DEFAULT_TMP_SIZE,
    Bounds,
    bound_hit,
    bound_note,
    format_size,
    parse_size,
)
from tether.plugins.sandbox.policy import SandboxSettings


def test_the_default_tmpfs_size_is_a_gib_or_a_quarter_of_ram_whichever_is_less() -> None:
    ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert min(1 << 30, ram // 4) == DEFAULT_TMP_SIZE
    assert DEFAULT_MAX_PROCESSES == 1024


@pytest.mark.parametrize(
    ("spelled", "size"),
    [(4096, 4096), ("512M", 512 << 20), ("1G", 1 << 30), ("1GiB", 1 << 30), ("64k", 64 << 10)],
)
def test_sizes_are_bytes_or_binary_units(spelled: int | str, size: int) -> None:
    assert parse_size(spelled) == size


def test_a_size_that_is_not_one_is_refused_with_a_valid_spelling() -> None:
    with pytest.raises(ValueError, match=r"size 'lots': give bytes or a number with K, M, G or T"):
        parse_size("lots")


def test_sizes_print_in_the_largest_unit_that_divides_them() -> None:
    assert [format_size(s) for s in (1 << 30, 8 << 20, 4097)] == ["1 GiB", "8 MiB", "4097 bytes"]


def test_the_settings_carry_the_bounds_into_the_policy() -> None:
    settings = SandboxSettings.model_validate({"tmp_size": "8M", "max_processes": 64})

    assert settings.policy("/w").bounds == Bounds(tmp_size=8 << 20, max_processes=64)
    assert SandboxSettings().policy("/w").bounds == Bounds()
    assert SandboxSettings.model_validate({"max_processes": None}).policy("/w").bounds == Bounds(
        max_processes=None
    )


@pytest.mark.parametrize(
    ("settings", "problem"),
    [
        ({"tmp_size": 10}, "tmp_size 10: give at least 4096 bytes"),
        ({"max_processes": 0}, "max_processes 0: give a positive count, or null for none"),
    ],
)
def test_bounds_that_cannot_work_are_refused_naming_the_key(
    settings: dict[str, object], problem: str
) -> None:
    with pytest.raises(ValidationError, match=problem):
        SandboxSettings.model_validate(settings)


def test_a_refused_fork_names_the_process_bound() -> None:
    output = "ok\nbash: fork: retry: Resource temporarily unavailable\n"

    assert bound_hit(Bounds(max_processes=64), output) == (
        "this may have hit the sandbox's process bound (max_processes: 64 processes and threads "
        'at once): "bash: fork: retry: Resource temporarily unavailable"; the user can raise '
        "max_processes in the sandbox settings (tether.yml) if the task needs more"
    )


def test_a_full_disk_names_the_tmpfs_bound() -> None:
    output = "dd: error writing '/tmp/fill': No space left on device\n"

    assert bound_hit(Bounds(tmp_size=8 << 20), output) == (
        "this may have hit the sandbox's tmpfs bound if it wrote to /tmp or /dev/shm (tmp_size: "
        "8 MiB each): \"dd: error writing '/tmp/fill': No space left on device\"; the user can "
        "raise tmp_size in the sandbox settings (tether.yml) if the task needs more"
    )


def test_other_failures_name_no_bound() -> None:
    assert bound_hit(Bounds(), "ls: cannot access 'x': No such file or directory\n") is None


def test_the_kernels_word_names_the_process_bound_for_certain() -> None:
    assert bound_note(Bounds(max_processes=64), "max_processes") == (
        "it hit the sandbox's process bound (max_processes: 64 processes at once): forks past "
        "it failed; the user can raise max_processes in the sandbox settings (tether.yml) if "
        "the task needs more"
    )

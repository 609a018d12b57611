"""`lazy_names(globals(), sources)`: a module's `__getattr__` and `__dir__` for names it imports
only when first asked for (issue 36).

- A listed name is imported from its module (relative to the package) at its first use, and
  kept in the namespace, so the next access is a plain lookup.
- An unlisted name raises `AttributeError` naming the module, as a module's own would.
- `dir()` lists the lazy names beside what the namespace already holds.
"""

from __future__ import annotations

import pytest

from tether.core import timers
from tether.core.lazy import lazy_names


def namespace() -> dict[str, object]:
    return {"__name__": "tether.core.example", "__package__": "tether.core", "here": 1}


def test_a_listed_name_is_imported_at_its_first_use_and_kept() -> None:
    names = namespace()
    get, _ = lazy_names(names, {"loop_timers": ".timers"})

    assert "loop_timers" not in names
    assert get("loop_timers") is timers.loop_timers
    assert names["loop_timers"] is timers.loop_timers


def test_an_absolute_source_is_imported_as_named() -> None:
    get, _ = lazy_names(namespace(), {"loop_timers": "tether.core.timers"})

    assert get("loop_timers") is timers.loop_timers


def test_an_unlisted_name_raises_attribute_error_naming_the_module() -> None:
    get, _ = lazy_names(namespace(), {"loop_timers": ".timers"})

    with pytest.raises(AttributeError) as caught:
        get("nothing")

    assert str(caught.value) == "module 'tether.core.example' has no attribute 'nothing'"


def test_dir_lists_the_lazy_names_beside_the_namespace() -> None:
    _, names = lazy_names(namespace(), {"loop_timers": ".timers"})

    assert names() == ["__name__", "__package__", "here", "loop_timers"]


def test_a_lazy_package_hands_on_the_same_object_as_its_module() -> None:
    from tether.plugins import jobs
    from tether.plugins.jobs.registry import JobRegistry

    assert jobs.JobRegistry is JobRegistry
    assert "JobRegistry" in dir(jobs)

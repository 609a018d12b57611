"""A plugin module whose own import fails (a dependency is missing)."""

import tether_kernel_tests_missing_dependency  # type: ignore[import-not-found]  # noqa: F401

name = "bad-import"

"""The environment a child process starts with.

Owns one rule: start from the parent's environment as the sandbox's environment policy lets it
through (`tether.plugins.sandbox.environment`: the variables that look like credentials — by
name, like `GITHUB_TOKEN` or `MYSQL_PWD`, or by value, like a URL with a password — are dropped
unless the policy's `include` names them, its `exclude` drops more, its `set` adds fixed values),
then apply the request's explicit entries, which always win (a credential-shaped name passed
explicitly is kept; a `None` value removes an inherited variable). The parent's `os.environ` is
never modified.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..sandbox.environment import DEFAULT_ENV_POLICY, EnvPolicy, inherited

__all__ = ["child_environment"]

_cached: tuple[dict[bytes, bytes], EnvPolicy, dict[str, str]] | None = None


def _inherited_os_environ(policy: EnvPolicy) -> dict[str, str]:
    """`inherited(os.environ, policy)`, recomputed only when the environment or the policy
    changed. Reading `os.environ` decodes every entry (tens of µs per spawn); comparing its raw
    table is a C-level dict comparison."""
    global _cached
    raw = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict):
        return inherited(os.environ, policy)
    cached = _cached
    if cached is not None and cached[1] is policy and cached[0] == raw:
        return cached[2]
    result = inherited(os.environ, policy)
    _cached = (dict(raw), policy, result)
    return result


def child_environment(
    explicit: Mapping[str, str | None],
    parent: Mapping[str, str] | None = None,
    policy: EnvPolicy = DEFAULT_ENV_POLICY,
) -> dict[str, str]:
    """The parent environment (default `os.environ`) as `policy` passes it, overlaid by
    `explicit`."""
    env = dict(_inherited_os_environ(policy) if parent is None else inherited(parent, policy))
    for name, value in explicit.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env

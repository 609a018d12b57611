"""Which of tether's environment variables a process started for the model inherits.

Owns `EnvPolicy` (`sandbox: {env: ...}` in `tether.yml`, modelled on Codex's
`shell_environment_policy`), the built-in credential rules (`credential_reason`) and `inherited`,
which applies both to a parent environment. Does not own the explicit entries a request adds on
top (`tether.plugins.shell._env`) or which processes the policy applies to (docs/sandbox.md).

A parent variable reaches the child when, in this order:

1. `inherit` starts from `all` of tether's environment (the default), only the `core` variables
   (`CORE_VARIABLES`: PATH, HOME, USER, the locale, ...) or `none`;
2. a variable whose name matches an `include` glob is inherited whatever `inherit` says, and the
   built-in rules are not applied to it (the allowlist: `include: [DATABASE_URL]`);
3. every other one is dropped when it looks like a credential (`credential_reason`):
   * by name (case-insensitive): `KEY`, `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `PWD` (but not
     `PWD`/`OLDPWD`), `CREDENTIAL`, `AUTHORIZATION` anywhere in it; `PAT`, `AUTH` or `DSN` as a
     `_`-separated word (`GITHUB_PAT`, `NPM_CONFIG__AUTH`, `DOCKER_AUTH_CONFIG`, `SSH_AUTH_SOCK`,
     `SENTRY_DSN`; not `GIT_AUTHOR_NAME`, not `PATH`);
   * by value: a URL with a password (`postgres://user:pass@host/db`) or with a user name long
     enough to be a token (20+ characters: `https://ghp_…@github.com`, a Sentry DSN's key), a
     known token shape (GitHub `ghp_`/`github_pat_`, GitLab `glpat-`, Slack `xox?-`, npm `npm_`,
     AWS `AKIA…`, Google `AIza…`, `sk-…` API keys) or a PEM private key;
4. a variable matching an `exclude` glob is dropped, included or not (the denylist wins);
5. `set` adds fixed values (they win over everything inherited).

Globs are shell-style (`*`, `?`, `[...]`) and match names case-insensitively. The request's own
entries (the bash tool's `NO_COLOR=1`/`TERM=dumb`, a hook's `CLAUDE_PROJECT_DIR`, the settings
files' `env` block) are applied after this, by the caller, and always win.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, ClassVar, Final, Literal

from ...kernel.model_values import SLOW, ModelValue, strings

if TYPE_CHECKING:  # resolved where a mapping is validated (tether.kernel.config_models)
    from pydantic import AfterValidator

__all__ = ["CORE_VARIABLES", "DEFAULT_ENV_POLICY", "EnvPolicy", "credential_reason", "inherited"]

CORE_VARIABLES: Final = frozenset(
    {"HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP", "LANG"}
)
"""What `inherit: core` keeps (Codex's core set plus `LANG`; `LC_*` are kept too)."""


@functools.cache
def _name() -> re.Pattern[str]:
    return re.compile(
        r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|CREDENTIAL|AUTHORIZATION"
        r"|(?:^|_)(?:PAT|AUTH|DSN)(?:_|$)",
        re.IGNORECASE,
    )


_HARMLESS_NAMES: Final = frozenset({"PWD", "OLDPWD"})


@functools.cache
def _url_password() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:[^\s/?#@]+@")


@functools.cache
def _url_token_user() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[A-Za-z0-9._~%+-]{20,}@")


@functools.cache
def _token_shape() -> re.Pattern[str]:
    return re.compile(
        r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
        r"|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|npm_[A-Za-z0-9]{30,}"
        r"|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|sk-[A-Za-z0-9_-]{20,})"
        r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    )


def credential_reason(name: str, value: str) -> str | None:
    """Why the built-in rules keep `name=value` from a child (`"name"`, `"URL with a
    password"`, `"URL with a token"`, `"token"`), or None when it does not look like a
    credential."""
    if name not in _HARMLESS_NAMES and _name().search(name):
        return "name"
    if "://" in value:
        if _url_password().search(value):
            return "URL with a password"
        if _url_token_user().search(value):
            return "URL with a token"
    if _token_shape().search(value):
        return "token"
    return None


def _matches(name: str, globs: Sequence[str]) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, glob.upper()) for glob in globs)


_INHERIT: Final = ("all", "core", "none")


def _globs(globs: Sequence[str]) -> tuple[str, ...]:
    for glob in globs:
        if not glob.strip():
            raise ValueError("an entry is empty; give a variable name or a glob like AWS_*")
    return tuple(globs)


def _names(values: Mapping[str, str]) -> Mapping[str, str]:
    for name in values:
        if not name or "=" in name or "\0" in name:
            raise ValueError(f"{name!r} is not a variable name (no '=', not empty)")
    return dict(values)


def _fast_inherit(value: object) -> object:
    return value if type(value) is str and value in _INHERIT else SLOW


def _fast_globs(value: object) -> object:
    globs = strings(value)
    return globs if globs is not None and all(glob.strip() for glob in globs) else SLOW


def _fast_set(value: object) -> object:
    if type(value) is not dict:
        return SLOW
    for name, each in value.items():
        if type(name) is not str or type(each) is not str:
            return SLOW
        if not name or "=" in name or "\0" in name:
            return SLOW
    return dict(value)


class EnvPolicy(ModelValue):
    """`sandbox: {env: ...}` in `tether.yml` (see the module note for the order):

    ```yaml
    sandbox:
      env:
        inherit: all                    # all | core | none
        include: [DATABASE_URL, "AWS_PROFILE"]   # kept even if they look like credentials
        exclude: ["INTERNAL_*"]         # never passed
        set: {CI: "1"}                  # always passed with this value
    ```

    Validated when made (a bad value raises pydantic's `ValidationError`), without importing
    pydantic when every value is plainly valid (`tether.kernel.model_values`)."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models
    __config_fast__: ClassVar = {
        "inherit": _fast_inherit,
        "include": _fast_globs,
        "exclude": _fast_globs,
        "set": _fast_set,
    }

    inherit: Literal["all", "core", "none"] = "all"
    include: Annotated[tuple[str, ...], AfterValidator(_globs)] = ()
    exclude: Annotated[tuple[str, ...], AfterValidator(_globs)] = ()
    set: Annotated[Mapping[str, str], AfterValidator(_names)] = {}


DEFAULT_ENV_POLICY: Final = EnvPolicy()
"""Everything inherited except what the built-in rules call a credential."""


def _base(name: str, inherit: str) -> bool:
    if inherit == "all":
        return True
    return inherit == "core" and (name in CORE_VARIABLES or name.startswith("LC_"))


def inherited(parent: Mapping[str, str], policy: EnvPolicy = DEFAULT_ENV_POLICY) -> dict[str, str]:
    """The variables of `parent` a child gets under `policy`, with `policy.set` applied."""
    include, exclude, inherit = policy.include, policy.exclude, policy.inherit
    env: dict[str, str] = {}
    for name, value in parent.items():
        if include and _matches(name, include):
            pass
        elif not _base(name, inherit) or credential_reason(name, value) is not None:
            continue
        if exclude and _matches(name, exclude):
            continue
        env[name] = value
    env.update(policy.set)
    return env

"""Kernel errors, and the one-line rendering of pydantic validation errors they carry.

```
Exception
├── PluginError              a plugin could not be described, mounted or registered into
│   └── InvalidPluginConfig  a plugin's `config` failed its `Config` model (`.plugin`, `.detail`)
└── ConfigError              boot input is wrong: a config file, an entry, a name, a missing service
```

Owns: these classes and `describe_validation_error`. Does not own: where the messages are
prefixed with a file and an entry (config.py, boot.py).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # an error to describe means pydantic is imported already
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

__all__ = ["ConfigError", "InvalidPluginConfig", "PluginError", "describe_validation_error"]

_MAX_SHOWN = 80


class PluginError(Exception):
    """A plugin is malformed, clashes with another one, or registers on a disposed context."""


class InvalidPluginConfig(PluginError):
    """A plugin's config did not validate; `detail` is the one-line problem without the plugin."""

    def __init__(self, plugin: str, detail: str) -> None:
        super().__init__(f'plugin "{plugin}": {detail}')
        self.plugin = plugin
        self.detail = detail


class ConfigError(Exception):
    """Boot cannot proceed; the message is one line naming the file, the entry and the field."""


def describe_validation_error(error: ValidationError, *, root: str = "") -> str:
    """Render every violation as `<path>: <message>, got <input>`, joined with `"; "`.

    `<path>` is `root` followed by the error location, dotted, with list indices as `[i]`
    (`config.servers[1].host`). Pydantic's parsing explanations (", unable to parse string as
    an integer") are dropped in favour of the offending input.
    """
    return "; ".join(_describe(details, root) for details in error.errors(include_url=False))


def _describe(details: ErrorDetails, root: str) -> str:
    message = details["msg"].split(", unable to ", 1)[0]
    if details["type"] != "missing":
        message = f"{message}, got {show_value(details['input'])}"
    path = location(root, details["loc"])
    return f"{path}: {message}" if path else message


def location(root: str, loc: tuple[int | str, ...]) -> str:
    """`root` plus `loc` as a path: keys dotted, integer indices in brackets."""
    path = root
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


def show_value(value: object) -> str:
    """A short JSON-ish rendering of an offending value, for messages."""
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    return shown if len(shown) <= _MAX_SHOWN else shown[: _MAX_SHOWN - 1] + "…"

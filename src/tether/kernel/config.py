"""Config files: `$TETHER_HOME/config.yml` (user) and `tether.yml` (project).

```yaml
plugins:
  - id: web            # optional, unique within a file; defaults to name
    name: web          # entry point in group "tether.plugins", or `pkg.mod` / `pkg.mod:attr`
    config: {fetch_timeout_ms: 30000}
    disabled: false
sandbox: workspace-write   # or {mode, writable_roots, network_access}: docs/sandbox.md
```

Owns: reading a file (`yaml.safe_load`, after an iterative pass over the parser's events that
refuses nesting deeper than `MAX_DEPTH` and more than `MAX_NODES` values, aliases expanded, so
a hostile file is one line instead of a `RecursionError` from PyYAML's recursive composer or an
alias bomb), validating its shape into
`PluginEntry`s, the layering rule (files in order, user first: an entry whose id is already
known replaces it in place, so a project can reconfigure or disable a user plugin), and locating
the files. Every bad input is one `ConfigError` line naming the file, the entry and the field.
`sandbox:` is carried as written, with the file it came from (`TetherConfig.sandbox`): the agent's
boot validates and layers it (a later file's keys win). Does not own: resolving names, validating
a plugin's own `config` or the sandbox's, mounting (boot.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Final

from .errors import ConfigError, describe_validation_error, location

if TYPE_CHECKING:  # imported where a file is read: yaml costs ~50 ms at startup, pydantic more
    import yaml
    from pydantic import BaseModel, ValidationError

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "PluginEntry",
    "TetherConfig",
    "default_config_paths",
    "load_config",
    "tether_home",
]

_KEYS: Final = "id, name, config, disabled"
MAX_DEPTH: Final = 100
"""How deeply mappings and lists may nest in a config file (a real one needs about five)."""
MAX_NODES: Final = 100_000
"""How many values (collections and scalars, aliases expanded) a config file may hold."""


@dataclass(frozen=True, kw_only=True)
class PluginEntry:
    """One plugin to mount at boot: from a config file, or a builtin given to `boot`."""

    name: str  # entry point name or dotted path; just a label when `plugin` is given
    id: str | None = None
    config: Mapping[str, object] = field(default_factory=dict)  # validated by the plugin's Config
    value: object = None
    """Instead of `config` (then empty): an instance of the plugin's `Config`, already valid,
    handed to the plugin as is — no validation, so no pydantic (a built-in's own settings)."""
    disabled: bool = False
    plugin: object = None  # a plugin object to mount as is, instead of resolving `name`
    origin: str = ""  # where it was declared, for messages: "tether.yml: plugins[2]"

    @property
    def key(self) -> str:
        """The id, defaulting to the name; unique within one file."""
        return self.id if self.id is not None else self.name

    @property
    def settings(self) -> object:
        """What the plugin's `Config` is made from: `value` when given, else `config`."""
        return self.config if self.value is None else self.value

    @property
    def label(self) -> str:
        return f'{self.origin} (id "{self.key}")'


@dataclass(frozen=True)
class TetherConfig:
    """The layered plugin entries, in order (disabled ones included), and each file's
    `sandbox:` value as `(file, value)`, in layering order."""

    plugins: tuple[PluginEntry, ...] = ()
    sandbox: tuple[tuple[str, object], ...] = ()


def tether_home(environ: Mapping[str, str] = os.environ) -> Path:
    """`$TETHER_HOME`, default `~/.tether` (config.yml, sessions/)."""
    home = environ.get("TETHER_HOME")
    return Path(home).expanduser() if home else Path.home() / ".tether"


def default_config_paths(project: Path, environ: Mapping[str, str] = os.environ) -> list[Path]:
    """The files `load_config` layers by default: the user file, then `project/tether.yml`."""
    return [tether_home(environ) / "config.yml", project / "tether.yml"]


def load_config(paths: Sequence[Path]) -> TetherConfig:
    """Read and layer `paths` in order (missing files are skipped). Raises ConfigError."""
    merged: dict[str, PluginEntry] = {}
    sandbox: list[tuple[str, object]] = []
    for path in paths:
        entries, sandboxed = _read(path)
        for entry in entries:
            merged[entry.key] = entry  # an existing key keeps its position
        if sandboxed is not None:
            sandbox.append((str(path), sandboxed))
    return TetherConfig(tuple(merged.values()), tuple(sandbox))


def _read(path: Path) -> tuple[list[PluginEntry], object]:
    """A file's plugin entries and its `sandbox:` value (None when it has none)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], None
    except IsADirectoryError as error:
        if _empty_directory(path):  # a sandbox's placeholder (plugins/sandbox/placeholders.py)
            return [], None
        raise ConfigError(f"{path}: cannot read the file: {error}") from error
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the file: {error}") from error
    import yaml  # only when there is a file: it costs ~50 ms at startup

    try:
        _check_shape(text, path)
        document = yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
        raise ConfigError(f"{path}:{where} YAML syntax error: {error.problem}") from error
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: YAML syntax error: {error}") from error
    if document is None:
        return [], None
    if not isinstance(document, dict):
        raise ConfigError(
            f'{path}: the top level must be a mapping with a "plugins" list, got {_kind(document)}'
        )
    for key in document:
        if key not in ("plugins", "sandbox"):
            raise ConfigError(
                f'{path}: unexpected top-level key "{key}" (allowed: plugins, sandbox)'
            )
    sandbox = document.get("sandbox")
    items = document.get("plugins")
    if items is None:
        return [], sandbox
    if not isinstance(items, list):
        raise ConfigError(f"{path}: plugins: must be a list of plugin entries, got {_kind(items)}")
    entries: list[PluginEntry] = []
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        entry = _entry(item, f"{path}: plugins[{index}]")
        if (first := first_seen.get(entry.key)) is not None:
            raise ConfigError(
                f'{entry.origin}: duplicate id "{entry.key}" (first used at plugins[{first}])'
            )
        first_seen[entry.key] = index
        entries.append(entry)
    return entries, sandbox


def _empty_directory(path: Path) -> bool:
    try:
        return not os.listdir(path)
    except OSError:
        return False


def _check_shape(text: str, path: Path) -> None:
    """Raise ConfigError when collections nest deeper than MAX_DEPTH or the document, aliases
    expanded, holds more than MAX_NODES values. Iterative: PyYAML's parser keeps its own stack
    (only its composer recurses). An alias counts as the node its anchor names, so neither a
    chain of anchors nor "billion laughs" builds a huge document from a small file."""
    import yaml

    named: dict[str, tuple[int, int]] = {}  # anchor -> (height, size) of the node it names
    heights: list[int] = []  # per open collection: its tallest child so far
    sizes: list[int] = []  # per open collection: the values in it so far
    anchors: list[str | None] = []
    total = 0

    def child(height: int, size: int, event: yaml.Event) -> None:
        nonlocal total
        if len(heights) + height > MAX_DEPTH:
            problem = f"nested more than {MAX_DEPTH} levels deep"
        elif (total := total + size) > MAX_NODES:
            problem = f"holds more than {MAX_NODES} values (aliases expanded)"
        else:
            if heights:
                heights[-1] = max(heights[-1], height)
                sizes[-1] += size
            return
        mark = event.start_mark
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
        raise ConfigError(f"{path}:{where} {problem}; simplify the file")

    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            child(1, 1, event)
            heights.append(0)
            sizes.append(0)
            anchors.append(event.anchor)
        elif isinstance(event, yaml.CollectionEndEvent):
            height, size, anchor = heights.pop() + 1, sizes.pop() + 1, anchors.pop()
            if anchor is not None:
                named[anchor] = (height, size)
            if heights:  # the collection was counted when it opened; its parent learns its shape
                heights[-1] = max(heights[-1], height)
                sizes[-1] += size - 1
        elif isinstance(event, yaml.ScalarEvent):
            child(0, 1, event)
            if event.anchor is not None:
                named[event.anchor] = (0, 1)
        elif isinstance(event, yaml.AliasEvent):
            child(*named.get(event.anchor or "", (0, 1)), event)


def _entry(item: object, origin: str) -> PluginEntry:
    if not isinstance(item, dict):
        raise ConfigError(f'{origin}: must be a mapping with at least a "name", got {_kind(item)}')
    key = item.get("id", item.get("name"))
    label = f'{origin} (id "{key}")' if isinstance(key, str) else origin
    from pydantic import ValidationError  # a file lists plugins: their configs need it too

    try:
        valid = dict(_entry_model().model_validate(item))
    except ValidationError as error:
        raise ConfigError(f"{label}: {_problem(error)}") from None
    return PluginEntry(
        name=valid["name"],
        id=valid["id"],
        config=valid["config"] or {},
        disabled=valid["disabled"],
        origin=origin,
    )


@cache
def _entry_model() -> type[BaseModel]:
    """The model of one `plugins:` entry, made when a file first lists plugins."""
    from pydantic import BaseModel, ConfigDict, Field

    class _Entry(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        id: str | None = Field(default=None, min_length=1)
        name: str = Field(min_length=1)
        config: dict[str, object] | None = None
        disabled: bool = False

    return _Entry


def _problem(error: ValidationError) -> str:
    for details in error.errors(include_url=False):
        key = location("", details["loc"])
        if details["type"] == "extra_forbidden":
            return f'unexpected key "{key}" (allowed: {_KEYS})'
        if details["type"] == "missing":
            return f'missing required key "{key}"'
    return describe_validation_error(error)


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f'the string "{value}"'
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    return "null" if value is None else type(value).__name__

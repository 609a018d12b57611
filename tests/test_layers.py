"""Imports point down only: core → kernel → tools → plugins → agent → cli. A module may import
its own layer and the layers below it, never one above."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "tether"
ORDER = ["core", "kernel", "tools", "plugins", "agent", "cli"]
# tether.testing holds public fakes; it may use anything, and only tests import it.
FREE = {"testing"}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "tether":
        return None
    return parts[1]


def _imports(path: Path) -> list[str]:
    package = "tether." + ".".join(path.relative_to(SRC).with_suffix("").parts)
    if path.name == "__init__.py":
        package = package.rsplit(".", 1)[0] + "."
    base = package.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                found.append(".".join([*anchor, node.module or ""]).rstrip("."))
            elif node.module:
                found.append(node.module)
    return found


def test_no_module_imports_a_layer_above_its_own() -> None:
    violations = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        own = rel.parts[0] if len(rel.parts) > 1 else None
        if own is None or own in FREE or own not in ORDER:
            continue
        for target in _imports(path):
            layer = _layer(target)
            if layer is None:
                continue
            if layer in FREE:
                if own != "cli":  # only the CLI's demo may use the public fakes
                    violations.append(f"{rel} imports {target}")
                continue
            if layer in ORDER and ORDER.index(layer) > ORDER.index(own):
                violations.append(f"{rel} imports {target}")
    assert violations == []

"""Imports point down only: core → kernel → tools → plugins → agent → temporal → cli. A module
may import its own layer and the layers below it, never one above. Within the command line
(`tether.cli`) and the Temporal layer no two modules import each other, directly or around a
circle — counting every import, also those inside functions and under `TYPE_CHECKING` (issue 26
§10: `cli/chat/app.py`, `cli/chat/commands.py` and `cli/commands/agent.py` imported each other;
`temporal/worker.py` imported `cli.policy`)."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "tether"
ORDER = ["core", "kernel", "tools", "plugins", "agent", "temporal", "cli"]
# tether.testing holds public fakes; it may use anything, and only tests import it.
FREE = {"testing"}
ACYCLIC = ("tether.cli", "tether.temporal")
"""Packages whose modules must not import each other in a circle."""


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "tether":
        return None
    return parts[1]


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


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
                module = ".".join([*anchor, node.module or ""]).rstrip(".")
            elif node.module:
                module = node.module
            else:
                continue
            found.append(module)
            found.extend(f"{module}.{alias.name}" for alias in node.names)  # a submodule?
    return found


def _graph() -> dict[str, set[str]]:
    """Module → the tether modules it imports (a name that is not a module counts as its
    nearest enclosing module)."""
    paths = {_module_name(path): path for path in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        targets = set()
        for imported in _imports(path):
            target = imported
            while target and target not in paths:
                target = target.rpartition(".")[0]
            if target and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return sorted(found)


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
    assert sorted(set(violations)) == []


def test_the_command_line_and_temporal_modules_import_no_circle() -> None:
    graph = _graph()
    scoped = {
        name: {t for t in targets if t.startswith(ACYCLIC)}
        for name, targets in graph.items()
        if name.startswith(ACYCLIC)
    }
    assert _cycles(scoped) == []


def test_the_cycle_finder_sees_a_circle_through_a_function_level_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]

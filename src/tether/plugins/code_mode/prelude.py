"""The sandbox-side half of the bindings: the Python source that defines `tools` and
`ToolCallError` inside a run, generated from the binding names.

Owns: which names get a method (`tools.name(...)`) and which are reachable only by subscript
(`tools["my-tool"](...)`), and the one host function every binding funnels into,
`__tether_tool__(name, args)`, which the sandbox driver answers. Does not own answering it.

Monty (the sandbox) has no class inheritance, no `__getattr__` and no attributes on exception
instances, so:
  * `tools` is an instance of a generated class with one async method per bare-identifier name,
    plus `__getitem__` for every name (an unknown name reaches the host, which rejects it);
  * `ToolCallError` is the built-in `RuntimeError`: a failed binding call raises
    `RuntimeError("<tool name>: <message>")`. There is no `toolName` attribute; the tool's name
    starts the message. (`tools:sdk` says so.)
"""

from __future__ import annotations

import json
import keyword
import unicodedata
from collections.abc import Sequence
from typing import Final

__all__ = ["HOST_FUNCTION", "is_method_name", "prelude_source"]

HOST_FUNCTION: Final = "__tether_tool__"


def is_method_name(name: str) -> bool:
    """Whether `name` is bound as `tools.name`: a bare identifier (NFKC-stable), not a keyword
    or soft keyword, not underscore-leading."""
    return (
        name.isidentifier()
        and unicodedata.normalize("NFKC", name) == name
        and not keyword.iskeyword(name)
        and not keyword.issoftkeyword(name)
        and not name.startswith("_")
    )


def prelude_source(names: Sequence[str]) -> str:
    """The source fed before the program: `ToolCallError`, the `Tools` class and `tools`."""
    lines = [
        "ToolCallError = RuntimeError",
        "",
        "class Tools:",
        "    def __getitem__(self, name):",
        "        async def call(args):",
        f"            return await {HOST_FUNCTION}(name, args)",
        "        return call",
    ]
    for name in names:
        if is_method_name(name):
            lines += [
                "",
                f"    async def {name}(self, args):",
                f"        return await {HOST_FUNCTION}({json.dumps(name)}, args)",
            ]
    lines += ["", "tools = Tools()", ""]
    return "\n".join(lines)

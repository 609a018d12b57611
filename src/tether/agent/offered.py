"""The tools the model is offered: the registry's view for an agent, minus the tools a
`permissions` service withholds (a deny rule names them whole, so every call of theirs is
refused: Claude Code removes such tools from the model's context, `--tools` and
`--disallowedTools Bash` alike).

Owns `offered` (one filter over the schemas, used for every model request, the compaction
summary request and the headless `system/init` list). Does not own the rules (the `permissions`
plugin's `withholds`) nor the refusal: a call the model makes to a withheld tool anyway is
refused by the same rule, as before.
"""

from __future__ import annotations

from ..core.json import JsonValue
from ..kernel import Context

__all__ = ["offered"]


def offered(schemas: list[dict[str, JsonValue]], ctx: Context | None) -> list[dict[str, JsonValue]]:
    """`schemas` without those whose tool `ctx`'s `permissions` service withholds (all of them
    when there is no context or no such service)."""
    permissions = None if ctx is None else ctx.get("permissions")
    withholds = getattr(permissions, "withholds", None)  # the plugin, not imported here
    if not callable(withholds):
        return schemas
    return [schema for schema in schemas if not withholds(str(schema["name"]))]

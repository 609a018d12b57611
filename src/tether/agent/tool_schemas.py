"""Generating `tether/tools/builtin_schemas.json`: the built-in tools' parameter schemas as
pydantic makes them (issue 36: a boot sends them without importing the argument models).

Owns: the `ModelRef`s a default boot defines its built-in tools with (`argument_refs`; a model
made per configuration is a factory reference at the built-in default), and `generate()`, the
file's text. `python -m tether.agent.tool_schemas` rewrites the file after an argument model
changes; a test checks that the checked-in file equals `generate()`, so every recorded schema is
what pydantic makes of its reference now. Does not own the lookup (`tether.tools.precomputed`):
`define_tool` refuses a reference missing from the file (a factory's other configurations get
their schema from pydantic at definition).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..tools.model_ref import ModelRef
from ..tools.precomputed import TABLE_PATH, fingerprint
from ..tools.schema import model_facing_schema

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["argument_models", "argument_refs", "generate", "main"]


def argument_refs() -> list[ModelRef]:
    """The built-in tools' argument models, at the built-in plugins' default configuration."""
    from ..plugins.fs.tools import ToolFsConfig
    from ..plugins.search.tools import SearchToolsConfig
    from ..plugins.web.tools import ToolWebConfig

    return [
        ModelRef("tether.plugins.shell.bash_args:BashBackgroundParameters"),
        ModelRef("tether.plugins.shell.bash_args:ForegroundOnlyParameters"),
        ModelRef("tether.plugins.jobs.args:JobOutputParameters"),
        ModelRef("tether.plugins.jobs.args:JobListParameters"),
        ModelRef("tether.plugins.jobs.args:JobKillParameters"),
        ModelRef("tether.plugins.fs.args:read_args_model", (ToolFsConfig().read_limit,)),
        ModelRef("tether.plugins.fs.args:WriteArgs"),
        ModelRef("tether.plugins.fs.args:EditArgs"),
        ModelRef("tether.plugins.search.args:grep_args_model", (SearchToolsConfig().head_limit,)),
        ModelRef("tether.plugins.search.args:GlobArgs"),
        ModelRef("tether.plugins.todo.args:TodoArgs"),
        ModelRef("tether.plugins.web.args:FetchArguments"),
        ModelRef(
            "tether.plugins.web.args:search_arguments_model",
            (ToolWebConfig().search_max_queries,),
        ),
        # defined from the class itself (tether.plugins.permissions is not converted yet): its
        # key is the class's `schema_key`, looked up with the fingerprint check
        ModelRef("tether.plugins.permissions.plan:PlanParameters"),
        ModelRef("tether.plugins.code_mode.args:RunCodeArgs"),
        ModelRef("tether.agent.subagents.task_args:TaskParameters"),
    ]


def argument_models() -> list[type[BaseModel]]:
    """The models `argument_refs` name, resolved (pydantic imported, nothing built)."""
    return [ref.resolve() for ref in argument_refs()]


def generate() -> str:
    """The text of `builtin_schemas.json`: each model's fingerprint and pydantic's schema."""
    table: dict[str, object] = {}
    for ref in argument_refs():
        model = ref.resolve()
        table[ref.key] = {"fingerprint": fingerprint(model), "schema": model_facing_schema(model)}
    return json.dumps(table, indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    """Rewrite the checked-in file from the current models."""
    TABLE_PATH.write_text(generate(), "utf-8")
    print(f"wrote {TABLE_PATH}")


if __name__ == "__main__":
    main()

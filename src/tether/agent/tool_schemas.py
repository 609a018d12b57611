"""Generating `tether/tools/builtin_schemas.json`: the built-in tools' parameter schemas as
pydantic makes them (issue 36: a boot sends them without building the argument models).

Owns: the argument models a default boot defines its built-in tools with (`argument_models`;
a model made per configuration, at the built-in default), and `generate()`, the file's text.
`python -m tether.agent.tool_schemas` rewrites the file after an argument model changes; a test
checks that the checked-in file equals `generate()`. Does not own the lookup
(`tether.tools.precomputed`): a model missing from the file, or whose fields changed, gets its
schema from pydantic at definition, as before.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..tools.precomputed import TABLE_PATH, fingerprint, schema_key
from ..tools.schema import model_facing_schema

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["argument_models", "generate", "main"]


def argument_models() -> list[type[BaseModel]]:
    """The built-in tools' argument models, at the built-in plugins' default configuration."""
    from ..plugins.code_mode.tool import RunCodeArgs
    from ..plugins.fs.args import EditArgs, WriteArgs, read_args_model
    from ..plugins.fs.tools import ToolFsConfig
    from ..plugins.jobs.tools import JobKillParameters, JobListParameters, JobOutputParameters
    from ..plugins.permissions.plan import PlanParameters
    from ..plugins.search.args import GlobArgs, grep_args_model
    from ..plugins.search.tools import SearchToolsConfig
    from ..plugins.shell.bash import BashBackgroundParameters, ForegroundOnlyParameters
    from ..plugins.todo.tool import TodoArgs
    from ..plugins.web.tools import FetchArguments, ToolWebConfig, search_arguments_model
    from .subagents.task import TaskParameters

    return [
        BashBackgroundParameters,
        ForegroundOnlyParameters,
        JobOutputParameters,
        JobListParameters,
        JobKillParameters,
        read_args_model(ToolFsConfig().read_limit),
        WriteArgs,
        EditArgs,
        grep_args_model(SearchToolsConfig().head_limit),
        GlobArgs,
        TodoArgs,
        FetchArguments,
        search_arguments_model(ToolWebConfig().search_max_queries),
        PlanParameters,
        RunCodeArgs,
        TaskParameters,
    ]


def generate() -> str:
    """The text of `builtin_schemas.json`: each model's fingerprint and pydantic's schema."""
    table = {
        schema_key(model): {
            "fingerprint": fingerprint(model),
            "schema": model_facing_schema(model),
        }
        for model in argument_models()
    }
    return json.dumps(table, indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    """Rewrite the checked-in file from the current models."""
    TABLE_PATH.write_text(generate(), "utf-8")
    print(f"wrote {TABLE_PATH}")


if __name__ == "__main__":
    main()

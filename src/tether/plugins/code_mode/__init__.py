"""Code Mode: `run_code`, a model-written Python program that calls tools through the pipeline.

Plugin: `tether.plugins.code_mode.plugin` (`code-mode`, provides `ctx.code_runtime`, registers
`run_code`). Modules:

    seam.py      the `ctx.code_runtime` seam: failure kinds, budgets, the protocols
    records.py   the seam's records: bindings, results, errors
    runtime.py   `MontyRuntime`: the runtime object the plugin provides
    sandbox.py   a run of the Monty sandbox, driven one suspension at a time
    prelude.py   the sandbox-side `tools` object and `ToolCallError`
    bridge.py    binding calls -> nested tool calls under a per-run scheduler
    tool.py      the `run_code` tool: texts, rendering, the body
    sdk.py       the `tools:sdk` prompt section: typed stubs from JSON Schema

`pydantic_monty` (the `code-mode` extra) is imported only when a program runs.
"""

__all__: list[str] = []

"""`MontyRuntime`: `ctx.code_runtime` over Monty — the object the plugin provides.

Owns: the runtime's budgets and options, and checking a run's program and binding names before
it starts. The run itself (the worker, the suspensions, the budgets' enforcement) is
sandbox.py's, imported by the first run, not when the plugin is mounted (issue 36); so is
`pydantic_monty` (the `code-mode` extra). Does not own what a binding call does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from ...core.signals import AbortSignal
from .seam import CodeBudgets

if TYPE_CHECKING:
    from .records import CodeRunResult, ToolBindings

__all__ = ["MontyRuntime"]


class MontyRuntime:
    """`ctx.code_runtime` backed by a Monty worker process per run."""

    def __init__(
        self,
        budgets: CodeBudgets | None = None,
        *,
        binary_path: str | None = None,
        on_worker: Callable[[int], None] | None = None,
    ) -> None:
        """`on_worker(pid)` is told each run's worker process id (diagnostics and tests)."""
        self.budgets = budgets if budgets is not None else CodeBudgets()
        self._binary_path = binary_path
        self._on_worker = on_worker

    @property
    def language(self) -> Literal["python"]:
        return "python"

    @property
    def isolation(self) -> Literal["process"]:
        return "process"

    async def run(
        self, *, program: str, bindings: ToolBindings, signal: AbortSignal
    ) -> CodeRunResult:
        """Run `program`; see the module note. Raises `TypeError`/`ValueError` for a program
        that is not a `str` or a binding name that is not a non-empty `str`."""
        if not isinstance(program, str):
            raise TypeError(f"program must be a str; got {type(program).__name__}")
        for name in bindings.names:
            if not isinstance(name, str) or not name:
                raise ValueError(f"binding names must be non-empty strings; got {name!r}")
        from .sandbox import run_program  # the run's machinery: at the first run (issue 36)

        return await run_program(
            program, self.budgets, bindings, signal, self._binary_path, self._on_worker
        )

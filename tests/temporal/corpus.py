"""The replay corpus: recorded session-workflow histories, one directory per released behaviour
(`histories/v1`: before versioning; `histories/v2`: with the patches of
`tether.temporal.versions`), and the payloads they reference outside the history
(`histories/payloads`, a file payload store).

`replay(history)` replays one through today's `SessionWorkflow` in the worker's sandbox and
checks three things: no nondeterminism; every `run_turn` result the replay derives equals the
one the history recorded (its entries too, where it recorded them) — so a change that would
re-derive an old turn's log differently fails here even when Temporal would not notice; and
every activity the replay starts has the options its `ActivityTaskScheduled` event recorded
(task queue, timeouts, heartbeat, retry policy) — Temporal's own replay compares only an
activity's type and id, so an unpatched change of options would pass it.
`record(...)` adds a history to the corpus (`TETHER_RECORD_HISTORIES=1` in the dev-server
tests), with the external payloads it references.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory
from temporalio.converter import (
    DataConverter,
    ExternalStorage,
    StorageDriverClaim,
    StorageDriverStoreContext,
)
from temporalio.worker import (
    HandleUpdateInput,
    Interceptor,
    Replayer,
    StartActivityInput,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
    WorkflowOutboundInterceptor,
)

from tether.temporal.payloads import TurnResult
from tether.temporal.storage import FileStorageDriver
from tether.temporal.worker import workflow_runner
from tether.temporal.workflow import SessionWorkflow

HISTORIES = Path(__file__).parent / "histories"
CURRENT = HISTORIES / "v2"
PAYLOADS = HISTORIES / "payloads"
_REFERENCE = b"temporal.api.sdk.v1.ExternalStorageReference"

_derived: dict[str, Any] = {}  # update id -> the result the replay's handler returned
_started: list[StartActivityInput] = []  # the activities the replay started, in order


class _CaptureStarts(WorkflowOutboundInterceptor):
    def start_activity(self, input: StartActivityInput) -> Any:
        _started.append(input)
        return super().start_activity(input)


class _Capture(WorkflowInboundInterceptor):
    def init(self, outbound: WorkflowOutboundInterceptor) -> None:
        super().init(_CaptureStarts(outbound))

    async def handle_update_handler(self, input: HandleUpdateInput) -> Any:
        result = await super().handle_update_handler(input)
        if input.update == "run_turn":
            _derived[input.id] = result
        return result


class _TurnResults(Interceptor):
    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor]:
        return _Capture


class _Replaying(FileStorageDriver):
    """Reads the store; writes nothing: what a replay stores again (a command's payload) is
    discarded by the replay, so the corpus is never changed by running the tests."""

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        return [StorageDriverClaim({"key": "replayed"}) for _ in payloads]


def converter(payloads: Path = PAYLOADS) -> DataConverter:
    storage = ExternalStorage(drivers=[_Replaying(payloads)])
    return DataConverter(external_storage=storage)


def histories() -> list[Path]:
    return sorted(HISTORIES.glob("v*/*.json"))


async def recorded_turns(history: WorkflowHistory, data_converter: DataConverter) -> dict[str, Any]:
    """update id -> the `run_turn` result the history recorded."""
    accepted: dict[int, str] = {}
    out: dict[str, Any] = {}
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
            attributes = event.workflow_execution_update_accepted_event_attributes
            if attributes.accepted_request.input.name == "run_turn":
                accepted[event.event_id] = attributes.accepted_request.meta.update_id
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
            completed = event.workflow_execution_update_completed_event_attributes
            update_id = accepted.get(completed.accepted_event_id)
            if update_id is not None and completed.outcome.HasField("success"):
                (result,) = await data_converter.decode(
                    completed.outcome.success.payloads, [TurnResult]
                )
                out[update_id] = result
    return out


def _same(recorded: TurnResult, derived: TurnResult) -> bool:
    if recorded.entries is None:  # recorded before turns carried their entries
        return (recorded.turn, recorded.reason, recorded.text, recorded.log_size) == (
            derived.turn,
            derived.reason,
            derived.text,
            derived.log_size,
        )
    return recorded == derived


async def replay(history: WorkflowHistory, payloads: Path = PAYLOADS) -> None:
    """Replay `history`; raises AssertionError on nondeterminism or a turn derived otherwise."""
    data_converter = converter(payloads)
    replayer = Replayer(
        workflows=[SessionWorkflow],
        workflow_runner=workflow_runner(),
        data_converter=data_converter,
        interceptors=[_TurnResults()],
    )
    _derived.clear()
    _started.clear()
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, f"{history.workflow_id}: {result.replay_failure!r}"
    _same_activity_options(history, _started)
    recorded = await recorded_turns(history, data_converter)
    for update_id, turn in recorded.items():
        derived = _derived.get(update_id)
        assert derived is not None, f"turn {update_id} was not derived again by the replay"
        assert _same(turn, derived), f"turn {update_id} replays differently:\n{turn}\n{derived}"


def _seconds(duration: Any) -> float:
    return float(duration.ToTimedelta().total_seconds())


def _wanted(value: timedelta | None) -> float:
    return 0.0 if value is None else value.total_seconds()


def _same_activity_options(history: WorkflowHistory, started: Sequence[StartActivityInput]) -> None:
    """Every recorded `ActivityTaskScheduled` matches the activity the replay started in its
    place, option by option (an unset timeout as the server fills it in: schedule-to-start
    and start-to-close default to schedule-to-close, a heartbeat to none)."""
    scheduled = [
        event.activity_task_scheduled_event_attributes
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert len(started) >= len(scheduled), (
        f"{history.workflow_id}: the replay started {len(started)} activities, the history "
        f"scheduled {len(scheduled)}"
    )
    for index, (recorded, replayed) in enumerate(zip(scheduled, started, strict=False)):
        differences = [
            f"{option}: recorded {was}, replayed {now}"
            for option, was, now in _options(recorded, replayed)
            if was != now
        ]
        assert not differences, (
            f"{history.workflow_id}: activity {index} ({replayed.activity}) was started with "
            f"other options than the history recorded — an unpatched change (see "
            f"tether.temporal.versions): {'; '.join(differences)}"
        )


def _options(recorded: Any, replayed: StartActivityInput) -> Iterator[tuple[str, object, object]]:
    """(option, recorded, replayed) for each option the replay's start can be compared on."""
    to_close = _seconds(recorded.schedule_to_close_timeout)
    yield "activity type", recorded.activity_type.name, replayed.activity
    if replayed.task_queue is not None:
        yield "task queue", recorded.task_queue.name, replayed.task_queue
    if replayed.schedule_to_close_timeout is not None:
        yield "schedule_to_close", to_close, _wanted(replayed.schedule_to_close_timeout)
    to_start = replayed.schedule_to_start_timeout
    yield (
        "schedule_to_start",
        _seconds(recorded.schedule_to_start_timeout),
        to_close if to_start is None else _wanted(to_start),
    )
    if replayed.start_to_close_timeout is not None:
        yield (
            "start_to_close",
            _seconds(recorded.start_to_close_timeout),
            _wanted(replayed.start_to_close_timeout),
        )
    yield "heartbeat", _seconds(recorded.heartbeat_timeout), _wanted(replayed.heartbeat_timeout)
    policy = replayed.retry_policy
    if policy is not None:
        attempts = recorded.retry_policy.maximum_attempts
        yield "retry maximum_attempts", attempts, policy.maximum_attempts
        yield (
            "retry non_retryable_error_types",
            list(recorded.retry_policy.non_retryable_error_types),
            list(policy.non_retryable_error_types or []),
        )


def patch_markers(history: WorkflowHistory) -> set[str]:
    """The patch ids the history's run took (its `core_patch` markers)."""
    found: set[str] = set()
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            attributes = event.marker_recorded_event_attributes
            if attributes.marker_name == "core_patch":
                data = attributes.details["patch-data"].payloads[0].data
                found.add(json.loads(data)["id"])
    return found


def _payloads(value: Any) -> Iterator[Payload]:
    """Every `Payload` message inside a protobuf message."""
    if isinstance(value, Payload):
        yield value
        return
    for field, item in value.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:  # a map: its values
            values = item.values()
        else:
            values = item if field.is_repeated else [item]
        for one in values:
            if hasattr(one, "ListFields"):
                yield from _payloads(one)


def payload_sizes(history: WorkflowHistory) -> list[int]:
    """The size of every payload the history holds."""
    return [p.ByteSize() for event in history.events for p in _payloads(event)]


def external_keys(history: WorkflowHistory) -> list[str]:
    """The file-store keys of the payloads the history holds by reference."""
    keys = []
    for event in history.events:
        for payload in _payloads(event):
            if payload.metadata.get("messageType") == _REFERENCE:
                keys.append(json.loads(payload.data)["claimData"]["key"])
    return keys


def record(history: WorkflowHistory, name: str, store: Path) -> None:
    """With TETHER_RECORD_HISTORIES=1: add `history` to the current corpus as `name`, with the
    external payloads it references (copied from the file store `store`)."""
    if not os.environ.get("TETHER_RECORD_HISTORIES"):
        return
    CURRENT.mkdir(parents=True, exist_ok=True)
    (CURRENT / f"{name}.json").write_text(history.to_json())
    for key in external_keys(history):
        target = PAYLOADS / key
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(store / key, target)

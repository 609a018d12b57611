"""The stream-json session's `session_state_changed` records, as Claude Code writes them for the
Claude Agent SDK.

Owns `SessionState`: it writes `{"type": "system", "subtype": "session_state_changed", "state",
"session_id", "uuid"}` each time the session's state changes, when the environment asks for
them, as Claude Code decides: `CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS` (the application's own
opt-in: it sees them as `SystemMessage`s), else `CLAUDE_CODE_SDK_READS_SESSION_STATE` (which the
SDK's transport sets: the records carry `"sdk_host_only": true`, and the SDK reads them to tell
when the run is over and keeps them out of the application's stream). Neither set: none.

States: `running` from a turn's start, `requires_action` while tether waits for the SDK's
answer to a `can_use_tool` request (then `running` again), `idle` after the turn's `result`.
Does not decide when turns start or end (`tether.cli.stream_input`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Final, Literal, TypeAlias

__all__ = ["SessionState", "State"]

State: TypeAlias = Literal["running", "requires_action", "idle"]

_EMIT: Final = "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS"
_SDK_READS: Final = "CLAUDE_CODE_SDK_READS_SESSION_STATE"
_OFF: Final = frozenset({"", "0", "false", "no", "off"})


def _on(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() not in _OFF


class SessionState:
    """Writes a record through `write` when the state changes (see the module note)."""

    def __init__(
        self,
        write: Callable[[Mapping[str, object]], None],
        environ: Mapping[str, str],
        session_id: Callable[[], str],
    ) -> None:
        self._write = write
        self._session_id = session_id
        self._emit = _on(environ, _EMIT)
        self._host_only = not self._emit and _on(environ, _SDK_READS)
        self._state: State | None = None

    @property
    def state(self) -> State | None:
        """The last state written (None: none yet)."""
        return self._state

    def change(self, state: State) -> None:
        """Enter `state`; a record is written when it differs from the current one."""
        if state == self._state:
            return
        self._state = state
        if not (self._emit or self._host_only):
            return
        record: dict[str, object] = {
            "type": "system",
            "subtype": "session_state_changed",
            "state": state,
            "session_id": self._session_id(),
            "uuid": str(uuid.uuid4()),
        }
        if self._host_only:
            record["sdk_host_only"] = True
        self._write(record)

"""tether.agent.session: durable, append-only JSONL sessions with crash repair (spec §7.6-7.7).

Names load on first use (PEP 562), like `tether.agent`'s: creating a session and appending to it
does not import the repair, salvage, check and listing machinery (issue 36).
"""

from __future__ import annotations

from ...core.lazy import lazy_names

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: keeps this module free of imports
if TYPE_CHECKING:
    from .check import Defect as Defect
    from .check import check_events as check_events
    from .events import DURABLE_TYPES as DURABLE_TYPES
    from .events import SURFACE_TYPES as SURFACE_TYPES
    from .events import SessionError as SessionError
    from .events import SessionEvent as SessionEvent
    from .events import SessionHeader as SessionHeader
    from .events import SessionWriteFailed as SessionWriteFailed
    from .files import TornTail as TornTail
    from .history import derive_messages as derive_messages
    from .log import SessionLog as SessionLog
    from .repair import OUTCOME_UNKNOWN_TEXT as OUTCOME_UNKNOWN_TEXT
    from .repair import TOOL_NOT_STARTED as TOOL_NOT_STARTED
    from .repair import TOOL_NOT_STARTED_TEXT as TOOL_NOT_STARTED_TEXT
    from .repair import TOOL_OUTCOME_UNKNOWN as TOOL_OUTCOME_UNKNOWN
    from .repair import interrupted_turn_closers as interrupted_turn_closers
    from .repair_report import RepairReport as RepairReport
    from .salvage_file import SalvageReport as SalvageReport
    from .store import LoadedSession as LoadedSession
    from .store import SessionCheck as SessionCheck
    from .store import SessionStore as SessionStore
    from .store import SessionSummary as SessionSummary
    from .store import new_session_id as new_session_id

_SOURCES: dict[str, str] = {
    "Defect": "tether.agent.session.check",
    "check_events": "tether.agent.session.check",
    "DURABLE_TYPES": "tether.agent.session.events",
    "SURFACE_TYPES": "tether.agent.session.events",
    "SessionError": "tether.agent.session.events",
    "SessionEvent": "tether.agent.session.events",
    "SessionHeader": "tether.agent.session.events",
    "SessionWriteFailed": "tether.agent.session.events",
    "TornTail": "tether.agent.session.files",
    "derive_messages": "tether.agent.session.history",
    "SessionLog": "tether.agent.session.log",
    "OUTCOME_UNKNOWN_TEXT": "tether.agent.session.repair",
    "TOOL_NOT_STARTED": "tether.agent.session.repair",
    "TOOL_NOT_STARTED_TEXT": "tether.agent.session.repair",
    "TOOL_OUTCOME_UNKNOWN": "tether.agent.session.repair",
    "interrupted_turn_closers": "tether.agent.session.repair",
    "RepairReport": "tether.agent.session.repair_report",
    "SalvageReport": "tether.agent.session.salvage_file",
    "LoadedSession": "tether.agent.session.store",
    "SessionCheck": "tether.agent.session.store",
    "SessionStore": "tether.agent.session.store",
    "SessionSummary": "tether.agent.session.store",
    "new_session_id": "tether.agent.session.store",
}
"""Public name → the module that defines it."""


__getattr__, __dir__ = lazy_names(globals(), _SOURCES)

__all__ = [
    "DURABLE_TYPES",
    "OUTCOME_UNKNOWN_TEXT",
    "SURFACE_TYPES",
    "TOOL_NOT_STARTED",
    "TOOL_NOT_STARTED_TEXT",
    "TOOL_OUTCOME_UNKNOWN",
    "Defect",
    "LoadedSession",
    "RepairReport",
    "SalvageReport",
    "SessionCheck",
    "SessionError",
    "SessionEvent",
    "SessionHeader",
    "SessionLog",
    "SessionStore",
    "SessionSummary",
    "SessionWriteFailed",
    "TornTail",
    "check_events",
    "derive_messages",
    "interrupted_turn_closers",
    "new_session_id",
]

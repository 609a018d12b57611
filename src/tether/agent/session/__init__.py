"""tether.agent.session: durable, append-only JSONL sessions with crash repair (spec §7.6-7.7)."""

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
from .store import LoadedSession as LoadedSession
from .store import SalvageReport as SalvageReport
from .store import SessionCheck as SessionCheck
from .store import SessionStore as SessionStore
from .store import SessionSummary as SessionSummary
from .store import new_session_id as new_session_id

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

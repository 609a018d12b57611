"""tether.testing: fakes for testing a program built on tether, with no network and no key.

`ScriptedModelServer` (`tether.testing.scripted_model`): an OpenAI-compatible model on
127.0.0.1 that answers each request with the next scripted response (`text_reply`,
`tool_calls_reply`, `reply(...)` of events, `http_error`) and records what it was sent;
`ManualClock` (`tether.testing.clock`): virtual time for `deadline`/`idle_watchdog`. Owns
nothing else; only tests (and `tether demo`) import it.
"""

from .clock import ManualClock as ManualClock
from .scripted_model import RecordedRequest as RecordedRequest
from .scripted_model import Script as Script
from .scripted_model import ScriptedModelServer as ScriptedModelServer
from .scripted_model import ScriptedResponse as ScriptedResponse
from .scripted_model import ScriptEvent as ScriptEvent
from .scripted_model import comment as comment
from .scripted_model import delay as delay
from .scripted_model import delta as delta
from .scripted_model import done as done
from .scripted_model import drop as drop
from .scripted_model import end as end
from .scripted_model import finish as finish
from .scripted_model import hang as hang
from .scripted_model import http_error as http_error
from .scripted_model import raw as raw
from .scripted_model import reasoning as reasoning
from .scripted_model import reply as reply
from .scripted_model import text as text
from .scripted_model import text_reply as text_reply
from .scripted_model import tool_call as tool_call
from .scripted_model import tool_calls_reply as tool_calls_reply
from .scripted_model import until as until
from .scripted_model import usage as usage

__all__ = [
    "ManualClock",
    "RecordedRequest",
    "Script",
    "ScriptEvent",
    "ScriptedModelServer",
    "ScriptedResponse",
    "comment",
    "delay",
    "delta",
    "done",
    "drop",
    "end",
    "finish",
    "hang",
    "http_error",
    "raw",
    "reasoning",
    "reply",
    "text",
    "text_reply",
    "tool_call",
    "tool_calls_reply",
    "until",
    "usage",
]

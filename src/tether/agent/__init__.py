"""tether.agent: the agent — `Agent` (the public, booted agent), its events and results, and the
pieces it is built from (the model seam `tether.agent.llm`, the session log
`tether.agent.session`, the step scheduler and the loop).

Names load on first use (PEP 562), like `tether`'s: importing a submodule (the boot path of
`tether tools list`) does not import the model client.
"""

from __future__ import annotations

from ..core.lazy import lazy_names

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: keeps this module free of imports
if TYPE_CHECKING:
    from .agent_options import PluginSpec as PluginSpec
    from .agent_options import ToolSpec as ToolSpec
    from .api import Agent as Agent
    from .api import AgentClosed as AgentClosed
    from .events import AgentEvent as AgentEvent
    from .events import Notice as Notice
    from .events import ReasoningDelta as ReasoningDelta
    from .events import ResponseComplete as ResponseComplete
    from .events import Retrying as Retrying
    from .events import RunResult as RunResult
    from .events import StepStarted as StepStarted
    from .events import TextDelta as TextDelta
    from .events import ToolCallFinished as ToolCallFinished
    from .events import ToolCallRecord as ToolCallRecord
    from .events import ToolCallStarted as ToolCallStarted
    from .events import ToolSlowToStop as ToolSlowToStop
    from .events import TurnFinished as TurnFinished
    from .llm import LlmConfig as LlmConfig
    from .loop import AgentLoop as AgentLoop
    from .loop import TurnOutcome as TurnOutcome
    from .stream import RunStream as RunStream
    from .stream import StreamClosed as StreamClosed

_SOURCES: dict[str, str] = {
    "Agent": "tether.agent.api",
    "AgentClosed": "tether.agent.api",
    "PluginSpec": "tether.agent.agent_options",
    "RunStream": "tether.agent.stream",
    "StreamClosed": "tether.agent.stream",
    "ToolSpec": "tether.agent.agent_options",
    "AgentEvent": "tether.agent.events",
    "Notice": "tether.agent.events",
    "ReasoningDelta": "tether.agent.events",
    "ResponseComplete": "tether.agent.events",
    "Retrying": "tether.agent.events",
    "RunResult": "tether.agent.events",
    "StepStarted": "tether.agent.events",
    "TextDelta": "tether.agent.events",
    "ToolCallFinished": "tether.agent.events",
    "ToolCallRecord": "tether.agent.events",
    "ToolCallStarted": "tether.agent.events",
    "ToolSlowToStop": "tether.agent.events",
    "TurnFinished": "tether.agent.events",
    "LlmConfig": "tether.agent.llm",
    "AgentLoop": "tether.agent.loop",
    "TurnOutcome": "tether.agent.loop",
}
"""Public name → the module that defines it."""


__getattr__, __dir__ = lazy_names(globals(), _SOURCES)

__all__ = [
    "Agent",
    "AgentClosed",
    "AgentEvent",
    "AgentLoop",
    "LlmConfig",
    "Notice",
    "PluginSpec",
    "ReasoningDelta",
    "ResponseComplete",
    "Retrying",
    "RunResult",
    "RunStream",
    "StepStarted",
    "StreamClosed",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallRecord",
    "ToolCallStarted",
    "ToolSlowToStop",
    "ToolSpec",
    "TurnFinished",
    "TurnOutcome",
]

"""The command line's boot is the agent's: `tether.agent.boot` (re-exported here for callers that
imported it from the command line package)."""

from ..agent.boot import AGENT_ONLY, BUILTIN_CONFIG, BUILTINS, builtin_entries, start

__all__ = ["AGENT_ONLY", "BUILTINS", "BUILTIN_CONFIG", "builtin_entries", "start"]

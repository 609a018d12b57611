"""Spilling big tool results: the spill policy (plugin `spill-policy`,
`tether.plugins.spill.policy`) and where full texts are kept (`store.py`).

    policy.py  when a result is spilled, the preview and notice, the two listeners
    store.py   the `SpillStore` seam and `LocalSpillStore` (files beside the session log)
"""

from ...core.lazy import lazy_names
from .policy import SpillPolicyConfig as SpillPolicyConfig

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .store import LOCAL_HINT as LOCAL_HINT
    from .store import LocalSpillStore as LocalSpillStore
    from .store import NoSpillOwner as NoSpillOwner
    from .store import Spilled as Spilled
    from .store import SpillStore as SpillStore

_STORE: frozenset[str] = frozenset(
    {"LOCAL_HINT", "LocalSpillStore", "NoSpillOwner", "SpillStore", "Spilled"}
)
"""Names of `store.py`, imported at their first use: a boot spills nothing (issue 36)."""


__getattr__, __dir__ = lazy_names(globals(), dict.fromkeys(_STORE, ".store"))


__all__ = [
    "LOCAL_HINT",
    "LocalSpillStore",
    "NoSpillOwner",
    "SpillPolicyConfig",
    "SpillStore",
    "Spilled",
]

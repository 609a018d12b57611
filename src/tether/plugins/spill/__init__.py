"""Spilling big tool results: the spill policy (plugin `spill-policy`,
`tether.plugins.spill.policy`) and where full texts are kept (`store.py`).

    policy.py  when a result is spilled, the preview and notice, the two listeners
    store.py   the `SpillStore` seam and `LocalSpillStore` (files beside the session log)
"""

from .policy import SpillPolicyConfig as SpillPolicyConfig
from .store import LOCAL_HINT as LOCAL_HINT
from .store import LocalSpillStore as LocalSpillStore
from .store import NoSpillOwner as NoSpillOwner
from .store import Spilled as Spilled
from .store import SpillStore as SpillStore

__all__ = [
    "LOCAL_HINT",
    "LocalSpillStore",
    "NoSpillOwner",
    "SpillPolicyConfig",
    "SpillStore",
    "Spilled",
]

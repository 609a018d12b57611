"""How long the suite waits for something that must happen.

`PATIENCE_S` bounds every wait for a condition, a process or an answer: a backstop that turns a
hang into a failure, never a measure of speed. The suite runs on two cores shared with other test
runs (load 20 and more), where one `tether run` has taken over 45 s; a wait that ends as soon as
its condition holds costs nothing for being generous.
"""

from __future__ import annotations

from typing import Final

__all__ = ["PATIENCE_S"]

PATIENCE_S: Final = 120.0

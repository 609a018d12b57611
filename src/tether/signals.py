"""tether.signals: cancellation (CONTRACT §1) — the signal a caller owns and passes down.

A public path of its own for the names `tether` keeps at the top level only in part
(`AbortController`, `AbortSignal`, `AbortError` are also in `tether.__all__`). Owns nothing:
the implementation is `tether.core.signals`.
"""

from .core.signals import AbortController, AbortError, AbortSignal, FusedSignal

__all__ = ["AbortController", "AbortError", "AbortSignal", "FusedSignal"]

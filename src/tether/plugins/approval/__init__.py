"""The approval service (`approval`): how a policy's `Ask` is answered, and the audit trail.

Plugin: `tether.plugins.approval.service:Approval` (provides `ctx.approval`). The interactive
prompt itself belongs to the front end (`tether.cli.approval` for the terminal), which attaches a
`Prompter`.
"""

from .questions import ApprovalAnswer as ApprovalAnswer
from .questions import ApprovalQuestion as ApprovalQuestion
from .questions import Prompter as Prompter
from .questions import Rejection as Rejection
from .questions import Unanswerable as Unanswerable
from .questions import fingerprint as fingerprint
from .service import Approval as Approval
from .service import ApprovalConfig as ApprovalConfig

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .elicitation import ElicitationQuestion as ElicitationQuestion
    from .elicitation import ElicitationReply as ElicitationReply
    from .elicitation import ElicitField as ElicitField

_FORMS: frozenset[str] = frozenset({"ElicitField", "ElicitationQuestion", "ElicitationReply"})
"""Names of `elicitation.py`, imported at their first use: a boot puts no form to the user."""


def __getattr__(name: str) -> object:
    if name not in _FORMS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import elicitation

    value: object = getattr(elicitation, name)
    globals()[name] = value
    return value


__all__ = [
    "Approval",
    "ApprovalAnswer",
    "ApprovalConfig",
    "ApprovalQuestion",
    "ElicitField",
    "ElicitationQuestion",
    "ElicitationReply",
    "Prompter",
    "Rejection",
    "Unanswerable",
    "fingerprint",
]

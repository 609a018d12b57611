"""The approval service (`approval`): how a policy's `Ask` is answered, and the audit trail.

Plugin: `tether.plugins.approval.service:Approval` (provides `ctx.approval`). The interactive
prompt itself belongs to the front end (`tether.cli.approval` for the terminal), which attaches a
`Prompter`.
"""

from .elicitation import ElicitationQuestion as ElicitationQuestion
from .elicitation import ElicitationReply as ElicitationReply
from .elicitation import ElicitField as ElicitField
from .questions import ApprovalAnswer as ApprovalAnswer
from .questions import ApprovalQuestion as ApprovalQuestion
from .questions import Prompter as Prompter
from .questions import Rejection as Rejection
from .questions import Unanswerable as Unanswerable
from .questions import fingerprint as fingerprint
from .service import Approval as Approval
from .service import ApprovalConfig as ApprovalConfig

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

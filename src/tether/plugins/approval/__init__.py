"""The approval service (`approval`): how a policy's `Ask` is answered, and the audit trail.

Plugin: `tether.plugins.approval.service:Approval` (provides `ctx.approval`). The interactive
prompt itself belongs to the front end (`tether.cli.approval` for the terminal), which attaches a
`Prompter`.
"""

from .elicitation import ElicitationQuestion as ElicitationQuestion
from .elicitation import ElicitationReply as ElicitationReply
from .elicitation import ElicitField as ElicitField
from .service import Approval as Approval
from .service import ApprovalAnswer as ApprovalAnswer
from .service import ApprovalConfig as ApprovalConfig
from .service import ApprovalQuestion as ApprovalQuestion
from .service import Prompter as Prompter
from .service import Rejection as Rejection
from .service import Unanswerable as Unanswerable
from .service import fingerprint as fingerprint

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

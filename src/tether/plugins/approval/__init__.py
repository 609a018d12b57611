"""The approval service (`approval`): how a policy's `Ask` is answered, and the audit trail.

Plugin: `tether.plugins.approval.service:Approval` (provides `ctx.approval`). The interactive
prompt itself belongs to the front end (`tether.cli.approval` for the terminal), which attaches a
`Prompter`.
"""

from ...core.lazy import lazy_names
from .service import Approval as Approval
from .service import ApprovalConfig as ApprovalConfig

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .elicitation import ElicitationQuestion as ElicitationQuestion
    from .elicitation import ElicitationReply as ElicitationReply
    from .elicitation import ElicitField as ElicitField
    from .questions import ApprovalAnswer as ApprovalAnswer
    from .questions import ApprovalQuestion as ApprovalQuestion
    from .questions import Prompter as Prompter
    from .questions import Rejection as Rejection
    from .questions import Unanswerable as Unanswerable
    from .questions import fingerprint as fingerprint

_LATER: dict[str, str] = {
    "ApprovalAnswer": ".questions",
    "ApprovalQuestion": ".questions",
    "ElicitField": ".elicitation",
    "ElicitationQuestion": ".elicitation",
    "ElicitationReply": ".elicitation",
    "Prompter": ".questions",
    "Rejection": ".questions",
    "Unanswerable": ".questions",
    "fingerprint": ".questions",
}
"""Names imported at their first use, and their modules (issue 36): a boot puts no question and
no form to the user."""


__getattr__, __dir__ = lazy_names(globals(), _LATER)

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

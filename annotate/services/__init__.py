"""The human workflow's writes, by concern: :mod:`.review` (submit, comment, decide) and
:mod:`.assignment` (who annotates what, copies for double annotation).

Label edits and undo are the project's one edit protocol: :mod:`trajectories.labels.edits`
and :mod:`trajectories.labels.protocol`.
"""

from .assignment import do_assign, do_assign_double, do_spread_assignments, do_unassign
from .proposals import do_accept, do_reject, do_request_proposal, do_start_proposals
from .review import access_comment, do_comment, do_resolve_comment, do_review, do_submit

__all__ = [
    "access_comment",
    "do_assign",
    "do_assign_double",
    "do_accept",
    "do_comment",
    "do_reject",
    "do_request_proposal",
    "do_resolve_comment",
    "do_start_proposals",
    "do_review",
    "do_spread_assignments",
    "do_submit",
    "do_unassign",
]

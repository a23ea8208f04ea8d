"""Who may do what to a trajectory's labels, in one place.

- any member of the project sees the labels (outsiders get a 404 from the access checks below);
- annotators edit and submit the trajectories assigned to them, and their own recordings
  while nobody is assigned;
- reviewers review (comment, approve, reject, send back);
- a review comment is resolved by those who may edit the trajectory or review it;
- admins do everything, including assignment.
"""

from __future__ import annotations

from functools import lru_cache

from django.db.models import Exists, OuterRef, QuerySet, Subquery
from django.http import Http404

from trajectories.access import AccessDenied, access_project
from trajectories.labels.protocol import undo_state_subqueries
from trajectories.models import Membership, Project, Role, Trajectory

from .models import Assignment, Proposal, ReviewComment

VIEW, EDIT, REVIEW = "view", "edit", "review"
RESOLVE = "resolve"  # a review comment: its annotators and reviewers


def assignees_of(trajectory: Trajectory) -> frozenset[int]:
    """Ids of the annotators assigned to the trajectory, read once per loaded instance.

    A page asks several times (may the user edit? is the page editable?); the instance lives
    for one request, and no workspace operation changes assignments.
    """
    cached = trajectory.__dict__.get("_assignees")
    if cached is None:
        cached = frozenset(
            Assignment.objects.filter(trajectory=trajectory)
            .order_by()
            .values_list("annotator_id", flat=True)
        )
        trajectory.__dict__["_assignees"] = cached
    return cached


def assignment_of(trajectory: Trajectory, user) -> tuple[bool, bool]:
    """Whether the trajectory has assignees, and whether ``user`` is one of them: loaded with
    the trajectory by the access checks below, else read with :func:`assignees_of`."""
    known = trajectory.__dict__.get("_assignment")
    if known is not None and known[0] == user.pk:
        return known[1], known[2]
    assignees = assignees_of(trajectory)
    return bool(assignees), user.pk in assignees


def may_edit(user, trajectory: Trajectory, role: str | None) -> bool:
    if role == Role.ADMIN:
        return True
    if role != Role.ANNOTATOR:
        return False
    has_assignees, assigned = assignment_of(trajectory, user)
    if has_assignees:
        return assigned
    return trajectory.recorded_by_id == user.pk


def may_review(role: str | None) -> bool:
    return role in (Role.REVIEWER, Role.ADMIN)


def _viewed(user, trajectories, trajectory_id, *, assignment: bool) -> tuple[Trajectory, str]:
    """The trajectory ``trajectory_id`` of ``trajectories`` with the user's role in its
    project, read with it in one query (none: an outsider, a 404); with ``assignment``,
    whether the user is one of its assignees too (``trajectories`` then tells whether it has
    any: :func:`with_assignees`)."""
    if not user.is_authenticated:
        raise Http404("No such trajectory")
    # Membership is the role read with the trajectory, not a second subquery over the user's
    # projects as trajectories_of() has it.
    viewer_role = Membership.objects.filter(project=OuterRef("project_id"), user_id=user.pk)
    facts = {"viewer_role": Subquery(viewer_role.values("role")[:1])}
    if assignment:
        mine = Assignment.objects.filter(trajectory=OuterRef("pk"), annotator_id=user.pk)
        facts["viewer_assigned"] = Exists(mine)
    try:
        trajectory = trajectories.annotate(**facts).get(pk=trajectory_id)
    except (Trajectory.DoesNotExist, ValueError, TypeError):
        raise Http404("No such trajectory") from None
    if trajectory.viewer_role is None and not user.is_superuser:
        raise Http404("No such trajectory")
    if assignment:
        known = (user.pk, trajectory.has_assignees, trajectory.viewer_assigned)
        trajectory.__dict__["_assignment"] = known
    return trajectory, Role.ADMIN if user.is_superuser else trajectory.viewer_role


def with_assignees(trajectories: QuerySet[Trajectory]) -> QuerySet[Trajectory]:
    """``trajectories`` with ``has_assignees``: whether anyone is assigned to each."""
    return trajectories.annotate(
        has_assignees=Exists(Assignment.objects.filter(trajectory=OuterRef("pk")))
    )


# The querysets the access checks start from, with what they read of each trajectory whoever
# the user is: built once per process (resolving subqueries is half the cost of an access
# check); each request adds the user's facts and its filter to a copy, as every queryset
# method makes one.


@lru_cache(maxsize=1)
def labelled_trajectories() -> QuerySet[Trajectory]:
    """Trajectories with their project, task and recorder, and whether they have assignees."""
    return with_assignees(Trajectory.objects.select_related("project", "task", "recorded_by"))


@lru_cache(maxsize=1)
def workspace_trajectories() -> QuerySet[Trajectory]:
    """Trajectories with what the workspace page asks of each (it names no recorder)."""
    here = OuterRef("pk")
    return with_assignees(Trajectory.objects.select_related("project", "task")).annotate(
        has_comments=Exists(ReviewComment.objects.filter(trajectory=here)),
        has_proposals=Exists(Proposal.objects.filter(trajectory=here)),
        **undo_state_subqueries(here),
    )


def access_labels(user, trajectory_id, action: str = VIEW) -> tuple[Trajectory, str]:
    """The trajectory (with its project, task and recorder) and the user's role in its
    project, if the user may do ``action``; in one query."""
    if action in (EDIT, RESOLVE):  # they ask whether the user is assigned
        trajectory, role = _viewed(user, labelled_trajectories(), trajectory_id, assignment=True)
    else:
        trajectories = Trajectory.objects.select_related("project", "task", "recorded_by")
        trajectory, role = _viewed(user, trajectories, trajectory_id, assignment=False)
    if action == EDIT and not may_edit(user, trajectory, role):
        raise AccessDenied(
            "Only the annotators assigned to this trajectory, and admins, can edit its labels"
        )
    if action == REVIEW and not may_review(role):
        raise AccessDenied("Only reviewers and admins can review")
    if action == RESOLVE and not (may_edit(user, trajectory, role) or may_review(role)):
        raise AccessDenied(
            "Only the trajectory's annotators, reviewers and admins resolve comments"
        )
    return trajectory, role


def access_workspace_page(user, trajectory_id) -> tuple[Trajectory, str | None]:
    """:func:`access_labels` for viewing, in one query instead of five: the user's role, and
    whether the trajectory has assignees (the user among them), review comments, proposals
    and label edits to undo or redo, come with the trajectory. The page skips the queries for
    what it has none of.

    Only for a page drawn right away: an edit changes these facts, so the edit views load the
    trajectory with :func:`access_labels` and ask as they draw.
    """
    trajectory, role = _viewed(user, workspace_trajectories(), trajectory_id, assignment=True)
    known = trajectory.__dict__
    known["_undo_state"] = {"can_undo": trajectory.can_undo, "can_redo": trajectory.can_redo}
    return trajectory, role


def access_assignments(user, project_id) -> Project:
    return access_project(user, project_id, roles=(Role.ADMIN,))

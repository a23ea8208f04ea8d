"""Whose turn it is: the work waiting for a person, in the order they should take it.

One definition for the review page's lists and the workspace's "next item".
"""

from __future__ import annotations

from django.db.models import Exists, F, OuterRef, Prefetch, Q, QuerySet

from config.prepared import Prepared
from trajectories.access import Visible, trajectories_of
from trajectories.labels.protocol import EDITABLE
from trajectories.models import Project, Role, Status, Trajectory

from .models import Assignment, ReviewComment

REVIEWING = (Role.REVIEWER, Role.ADMIN)


def _reviewed_by(user_id: int, everything: bool) -> QuerySet[Project]:
    """The projects whose trajectories the user reviews (``everything``: a site admin)."""
    if everything:
        return Project.objects.all()
    return Project.objects.filter(memberships__user_id=user_id, memberships__role__in=REVIEWING)


def _in_review(projects: QuerySet[Project]) -> QuerySet[Trajectory]:
    return (
        Trajectory.objects.filter(project__in=projects, status=Status.IN_REVIEW)
        .select_related("project", "task")
        .order_by("updated_at", "id")
    )


def review_queue_of(user) -> QuerySet[Trajectory]:
    """Trajectories in review in the projects where ``user`` reviews, oldest first."""
    if not user.is_authenticated:
        return Trajectory.objects.none()
    return _in_review(_reviewed_by(user.pk, user.is_superuser))


def _assigned(trajectories: QuerySet[Trajectory], user_id: int) -> QuerySet[Trajectory]:
    open_comments = ReviewComment.objects.filter(trajectory=OuterRef("pk"), resolved=False)
    return (
        trajectories.filter(assignments__annotator_id=user_id)
        .select_related("project", "task")
        .annotate(returned=Exists(open_comments))
        .order_by("-returned", "status", "-updated_at", "id")
    )


def work_of(user) -> QuerySet[Trajectory]:
    """Trajectories assigned to ``user``: those sent back with open comments first."""
    return _assigned(trajectories_of(user), user.pk)


def inbox_of(user) -> QuerySet[Trajectory]:
    """Trajectories a reviewer sent back to ``user`` that still have open comments: those
    assigned to them, or recorded by them while nobody is assigned; most recent first.
    Each has ``comments``, all of its review comments, in step order."""
    open_comments = ReviewComment.objects.filter(trajectory=OuterRef("pk"), resolved=False)
    assigned = Assignment.objects.filter(trajectory=OuterRef("pk"))
    mine = Exists(assigned.filter(annotator=user)) | (~Exists(assigned) & Q(recorded_by=user))
    comments = ReviewComment.objects.select_related("author", "resolved_by").order_by(
        F("step_index").asc(nulls_first=True), "created_at", "id"
    )
    return (
        trajectories_of(user)
        .filter(mine, Exists(open_comments), status=Status.ANNOTATING)
        .select_related("project", "task")
        .prefetch_related(Prefetch("review_comments", queryset=comments, to_attr="comments"))
        .order_by("-updated_at", "id")
    )


# The workspace's "next item" is asked on many page loads: its queries are prepared.
_NEXT_TO_REVIEW = {
    everything: Prepared(
        lambda user_id, current_id, everything=everything: _in_review(
            _reviewed_by(user_id, everything)
        ).exclude(pk=current_id)[:1],
        user_id=int,
        current_id=int,
    )
    for everything in (False, True)
}
_NEXT_TO_ANNOTATE = Visible(
    lambda projects, user_id, current_id: (
        _assigned(Trajectory.objects.filter(project__in=projects), user_id)
        .filter(status__in=EDITABLE)
        .exclude(pk=current_id)[:1]
    ),
    current_id=int,
)


def next_item(user, current: Trajectory, reviewing: bool) -> Trajectory | None:
    """What ``user`` takes up after ``current``: the next trajectory to review (for a
    reviewer who has just decided) or to annotate (for an annotator who has submitted)."""
    if not user.is_authenticated:
        return None
    if reviewing:
        query = _NEXT_TO_REVIEW[user.is_superuser]
        return query.first(user_id=user.pk, current_id=current.pk)
    return _NEXT_TO_ANNOTATE.first(user, current_id=current.pk)

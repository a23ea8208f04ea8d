"""Whose turn it is: the work waiting for a person, in the order they should take it.

One definition for the review page's lists and the workspace's "next item".
"""

from __future__ import annotations

from django.db.models import Exists, F, OuterRef, Prefetch, Q, QuerySet

from trajectories.access import trajectories_of
from trajectories.labels.protocol import EDITABLE
from trajectories.models import Project, Role, Status, Trajectory

from .models import Assignment, ReviewComment

REVIEWING = (Role.REVIEWER, Role.ADMIN)


def review_queue_of(user) -> QuerySet[Trajectory]:
    """Trajectories in review in the projects where ``user`` reviews, oldest first."""
    if not user.is_authenticated:
        return Trajectory.objects.none()
    reviewing = Project.objects.all()
    if not user.is_superuser:
        reviewing = reviewing.filter(memberships__user=user, memberships__role__in=REVIEWING)
    return (
        Trajectory.objects.filter(project__in=reviewing, status=Status.IN_REVIEW)
        .select_related("project", "task")
        .order_by("updated_at", "id")
    )


def work_of(user) -> QuerySet[Trajectory]:
    """Trajectories assigned to ``user``: those sent back with open comments first."""
    open_comments = ReviewComment.objects.filter(trajectory=OuterRef("pk"), resolved=False)
    return (
        trajectories_of(user)
        .filter(assignments__annotator=user)
        .select_related("project", "task")
        .annotate(returned=Exists(open_comments))
        .order_by("-returned", "status", "-updated_at", "id")
    )


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


def next_item(user, current: Trajectory, reviewing: bool) -> Trajectory | None:
    """What ``user`` takes up after ``current``: the next trajectory to review (for a
    reviewer who has just decided) or to annotate (for an annotator who has submitted)."""
    if not user.is_authenticated:
        return None
    waiting = review_queue_of(user) if reviewing else work_of(user).filter(status__in=EDITABLE)
    return waiting.exclude(pk=current.pk).first()

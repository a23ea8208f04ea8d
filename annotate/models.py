"""The human workflow around labels: who annotates what, review comments.

(The undo stack is part of the edit protocol, in ``trajectories.edits``.)
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from trajectories.models import Trajectory


class Assignment(models.Model):
    """An annotator is to label a trajectory (or, for double annotation, their copy of it)."""

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    assigned_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["trajectory", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["trajectory", "annotator"], name="assignment_unique_annotator"
            )
        ]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.trajectory_id}"


class ReviewComment(models.Model):
    """A reviewer's remark, on a step or on the whole trajectory (``step_index`` null)."""

    trajectory = models.ForeignKey(
        Trajectory, on_delete=models.CASCADE, related_name="review_comments"
    )
    step_index = models.PositiveIntegerField(null=True, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    resolved = models.BooleanField(default=False)

    class Meta:
        ordering = ["trajectory", "created_at", "id"]

    def __str__(self) -> str:
        return f"comment on {self.trajectory_id}@{self.step_index}: {self.text[:40]}"

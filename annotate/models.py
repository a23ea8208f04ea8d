"""The human workflow around labels: who annotates what, the undo stack, review comments."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from trajectories.models import AuditEvent, Trajectory


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


class LabelEdit(models.Model):
    """One entry of a trajectory's undo stack: the audit event holds the labels before/after.

    Undone entries form the redo stack until a new edit clears it.
    """

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="+")
    event = models.ForeignKey(AuditEvent, on_delete=models.CASCADE, related_name="+")
    undone = models.BooleanField(default=False)

    class Meta:
        ordering = ["trajectory", "id"]
        indexes = [models.Index(fields=["trajectory", "undone", "id"])]

    def __str__(self) -> str:
        return f"edit {self.event_id}{' (undone)' if self.undone else ''}"


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

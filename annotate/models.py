"""The human workflow around labels: who annotates what, review comments.

(The undo stack is part of the edit protocol, in ``trajectories.labels.protocol``.)
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
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who marked it resolved (or submitted the trajectory again).",
    )
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["trajectory", "created_at", "id"]
        indexes = [
            # The inbox: open comments of trajectories sent back.
            models.Index(fields=["trajectory", "resolved"], name="reviewcomment_open"),
        ]

    def __str__(self) -> str:
        return f"comment on {self.trajectory_id}@{self.step_index}: {self.text[:40]}"


class ProposalStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    ACCEPTED = "accepted", "Accepted"
    EDITED = "edited", "Accepted and edited"
    REJECTED = "rejected", "Rejected"
    FAILED = "failed", "Failed"


class Proposal(models.Model):
    """Labels a proposer (the heuristic, or an LLM) suggests for a trajectory, until a person
    accepts, edits or rejects them. ``payload`` holds the proposed ``subgoals``,
    ``memory_targets`` and ``anchors`` in the JSON of :mod:`trajectories.labels.parts`; a failed
    proposal keeps the proposer's ``raw_output`` and an ``error`` and never becomes labels.

    One proposal per trajectory, proposer and prompt version: asking again returns it.
    """

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="proposals")
    proposer = models.CharField(max_length=32)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=32)
    status = models.CharField(
        max_length=16, choices=ProposalStatus.choices, default=ProposalStatus.PENDING
    )
    payload = models.JSONField(default=dict, blank=True)
    # per part, each proposed item's decision by index: {"subgoals": {"0": "accepted"}, ...}
    decisions = models.JSONField(default=dict, blank=True)
    # which label edit (audit event id) made which accepted items labels, with their decisions:
    # {"812": {"part": "subgoals", "items": {"0": "accepted"}}}; an undo of that edit makes
    # them pending again, and a redo decides them again.
    accepted_in = models.JSONField(default=dict, blank=True)
    raw_output = models.TextField(blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    # A worker took it (a conditional UPDATE): a task delivered twice proposes once.
    claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["trajectory", "-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["trajectory", "proposer", "prompt_version"],
                name="proposal_unique_per_prompt",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=[s.value for s in ProposalStatus]),
                name="proposal_status_known",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.proposer}/{self.prompt_version} on {self.trajectory_id}: {self.status}"

    @property
    def origin(self) -> str:
        """What accepted labels say they came from (``Subgoal.origin``, evidence ``source``).

        Named by proposer and prompt version (one proposal each per trajectory), never by row
        id: labels are exported, and an id would name another proposal after an import.
        """
        return f"proposal:{self.proposer}:{self.prompt_version}"

"""Each project's RL settings, and every rollout a trainer played, with its rewards per step.

A rollout is one episode a trainer drove through the environment server (``rl.episode``). Its
row is written when it starts and after every step (committed then), so a server that dies
loses none of it; with the project's storage on, it is also a trajectory (source ``rollout``)
that opens, is labelled and exports like any episode.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from trajectories.models import Project, Trajectory


class RLSettings(models.Model):
    """How a project's rollouts are kept and rewarded (a project without a row: the defaults)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="rl_settings")
    store_rollouts = models.BooleanField(
        default=True,
        help_text="Keep every rollout as a trajectory (screens, steps, memory). Off: only its "
        "rewards and scores are kept, for throughput.",
    )
    rewards = models.JSONField(
        default=dict,
        blank=True,
        help_text='The reward parts and weights (rl/rewards.py), e.g. {"parts": {"task": 1, '
        '"format": -0.3, "memory": 0.3}, "memory_by": "rules", "delay": "step"}; {} is STAMP\'s.',
    )

    class Meta:
        verbose_name = "RL settings"
        verbose_name_plural = "RL settings"

    def __str__(self) -> str:
        return f"RL settings of {self.project}"


class RolloutStatus(models.TextChoices):
    RUNNING = "running", "Running"
    DONE = "done", "Done"  # the agent answered or terminated
    TRUNCATED = "truncated", "Truncated"  # a limit ended it: step cap, invalid outputs, lease
    ABANDONED = "abandoned", "Abandoned"  # its client closed the session or went silent
    LOST = "lost", "Lost"  # its server stopped while it ran (found by the reaper)


class Rollout(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="rollouts")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    run_name = models.CharField(max_length=100, help_text="The trainer's name for its run.")
    template = models.CharField(max_length=100)
    seed = models.PositiveIntegerField()
    level = models.PositiveSmallIntegerField(default=3)
    device_serial = models.CharField(max_length=200, blank=True)
    trajectory = models.ForeignKey(
        Trajectory, null=True, blank=True, on_delete=models.SET_NULL, related_name="rollouts"
    )
    status = models.CharField(
        max_length=16, choices=RolloutStatus.choices, default=RolloutStatus.RUNNING
    )
    reason = models.CharField(max_length=500, blank=True, help_text="Why it ended.")
    steps = models.PositiveIntegerField(default=0, help_text="Outputs the trainer sent.")
    rewards = models.JSONField(
        default=list, blank=True, help_text="Per output: the parts given then and their sum."
    )
    reward = models.FloatField(null=True, blank=True, help_text="r(τ): the parts added up.")
    parts = models.JSONField(
        default=dict, blank=True, help_text="The episode's task, format and memory rewards."
    )
    success = models.BooleanField(null=True)
    started_at = models.DateTimeField(auto_now_add=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [
            models.Index(fields=["project", "run_name"], name="rollout_project_run"),
            models.Index(fields=["status", "heartbeat_at"], name="rollout_status_heartbeat"),
        ]

    def __str__(self) -> str:
        return f"rollout {self.pk} of {self.run_name} ({self.template} @ {self.seed})"

"""An exploration of one app on one device, and each app's deny-list.

The exploration's ``frontier`` is everything its walk knows, saved after each episode: the
states found (with their reference screens and the actions still to try), the transitions, the
steps spent. A stopped exploration resumes from it, and gives what one never stopped gives.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from graphs.models import AppGraph
from trajectories.models import Job, Project


class Strategy(models.TextChoices):
    DFS = "dfs", "Depth first"
    BFS = "bfs", "Breadth first"
    LLM = "llm", "Model picks"


class ExplorationStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    STOPPED = "stopped", "Stopped"
    FINISHED = "finished", "Finished"
    FAILED = "failed", "Failed"


class Exploration(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="explorations")
    app = models.CharField(max_length=255, help_text="The package explored.")
    serial = models.CharField(max_length=255)
    adb_server = models.CharField(max_length=255, blank=True)
    strategy = models.CharField(max_length=8, choices=Strategy.choices, default=Strategy.DFS)
    seed = models.PositiveIntegerField(default=0)
    budget_steps = models.PositiveIntegerField(null=True, blank=True)
    budget_seconds = models.PositiveIntegerField(null=True, blank=True)
    allow = models.JSONField(default=list, blank=True, help_text="Deny-list entries allowed.")
    status = models.CharField(
        max_length=16, choices=ExplorationStatus.choices, default=ExplorationStatus.QUEUED
    )
    stop_requested = models.BooleanField(default=False)
    message = models.TextField(blank=True)
    frontier = models.JSONField(default=dict, blank=True)
    steps = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(default=0)
    states = models.PositiveIntegerField(default=0)
    transitions = models.PositiveIntegerField(default=0)
    frontier_size = models.PositiveIntegerField(default=0)
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    graph = models.ForeignKey(
        AppGraph, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(budget_steps__isnull=False)
                | models.Q(budget_seconds__isnull=False),
                name="exploration_has_a_budget",
            )
        ]

    def __str__(self) -> str:
        return f"exploration {self.pk} of {self.app}"

    @property
    def budget_text(self) -> str:
        if self.budget_steps is not None:
            return f"{self.budget_steps} steps"
        return f"{(self.budget_seconds or 0) // 60} minutes"

    @property
    def is_active(self) -> bool:
        return self.status in (ExplorationStatus.QUEUED, ExplorationStatus.RUNNING)


class DenyList(models.Model):
    """Elements of one app an exploration refuses to act on (by text or ``id:resource_id``),
    on top of the default words for buying, paying and sending."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="deny_lists")
    app = models.CharField(max_length=255)
    entries = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "app"], name="denylist_one_per_app")
        ]

    def __str__(self) -> str:
        return f"deny-list of {self.app}"

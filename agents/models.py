"""Suites of task instances, agent runs over them, and each run's episodes.

A run is a job (``trajectories.Job``, kind ``agent_run``): the job's page and the reaper serve
it like any other. Its episodes are rows of their own, one per (template, seed, level,
attempt): a message delivered twice, or an episode run again after its worker was lost, is
still one row, counted once. Each episode that ran is a trajectory (source ``agent`` or ``solver``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from trajectories.models import Job, Project, Trajectory


class Suite(models.Model):
    """A named, versioned list of task instances (template id + seed): the same benchmark for
    everyone who imports it. ``document`` is the suite as exported (``agents.suites``)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="suites")
    name = models.CharField(max_length=100)
    version = models.CharField(max_length=32)
    document = models.JSONField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "name", "-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name", "version"], name="suite_unique_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"

    @property
    def instances(self) -> list[dict[str, Any]]:
        return list(self.document.get("instances", []))


class Run(models.Model):
    """One agent (spec, regime, model) over a list of task instances, on a pool of devices."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="agent_runs")
    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="agent_run")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    agent_spec = models.CharField(max_length=500, help_text="The agent as asked for.")
    agent = models.CharField(max_length=32, help_text="openai, replay, random or solver.")
    regime = models.CharField(max_length=32, blank=True)
    model = models.CharField(max_length=200, blank=True)
    options = models.JSONField(default=dict, blank=True)
    suite = models.ForeignKey(
        Suite, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    suite_name = models.CharField(max_length=100, blank=True)
    suite_version = models.CharField(max_length=32, blank=True)
    instances = models.JSONField(default=list, help_text="[{template, seed, level}, ...] in order.")
    max_steps = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The run's step cap; null: each instance's own budget."
    )
    devices = models.JSONField(
        default=list, help_text="The pool: [{serial, adb_server}], devices of the project."
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.agent_spec}"

    @property
    def label(self) -> str:
        """How the run is named beside others: agent, regime and model."""
        parts = [self.agent]
        if self.regime:
            parts.append(self.regime)
        if self.model:
            parts.append(self.model)
        if self.options.get("graph"):
            parts.append(f"+graph v{self.options['graph']}")
        return " · ".join(parts)

    @property
    def suite_label(self) -> str:
        if self.suite_name:
            return f"{self.suite_name} v{self.suite_version}"
        return "tasks " + ", ".join(sorted({i["template"] for i in self.instances}))


class EpisodeStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    FINISHED = "finished", "Finished"


class FailureKind(models.TextChoices):
    WRONG_ANSWER = "wrong_answer", "Wrong answer"
    GAVE_UP = "gave_up", "Gave up"
    STEP_CAP = "step_cap", "Step cap"
    TIME_CAP = "time_cap", "Time cap"  # the device's lease reached its maximum length
    INVALID_OUTPUT = "invalid_output", "Invalid output"
    DEVICE_ERROR = "device_error", "Device error"
    MODEL_ERROR = "model_error", "Model error"
    WORKER_LOST = "worker_lost", "Worker lost"
    HARNESS_ERROR = "harness_error", "Harness error"


class Episode(models.Model):
    """One task instance (template, seed, difficulty level) played once by the run's agent."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="episodes")
    template = models.CharField(max_length=100, help_text="The task template's id.")
    seed = models.PositiveIntegerField()
    level = models.PositiveSmallIntegerField(
        default=3,
        help_text="STAMP's difficulty level: 1 simplified with the task-required knowledge, "
        "2 the task with the knowledge, 3 the task alone.",
    )
    attempt = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(
        max_length=16, choices=EpisodeStatus.choices, default=EpisodeStatus.QUEUED
    )
    # While running, its worker touches heartbeat_at; a running episode whose heartbeat is older
    # than WAYPOINT_JOB_STALE_S lost its worker and may be claimed again.
    worker = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    starts = models.PositiveIntegerField(default=0, help_text="Times a worker began it.")
    device_serial = models.CharField(max_length=200, blank=True)
    trajectory = models.ForeignKey(
        Trajectory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    success = models.BooleanField(null=True)
    failure_kind = models.CharField(max_length=16, choices=FailureKind.choices, blank=True)
    answer = models.TextField(blank=True)
    steps = models.PositiveIntegerField(default=0)
    invalid_outputs = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    model_ms = models.PositiveIntegerField(default=0, help_text="Time spent waiting on the agent.")
    duration_ms = models.PositiveIntegerField(default=0)
    memory_score = models.FloatField(
        null=True, blank=True, help_text="STAMP's g: 1, 0.5 or 0 (None: no memory targets)."
    )
    message = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "template", "seed", "level", "attempt"],
                name="episode_unique_instance_level",
            ),
            models.CheckConstraint(
                condition=models.Q(level__in=[1, 2, 3]), name="episode_level_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(failure_kind__in=["", *FailureKind.values]),
                name="episode_failure_kind_valid",
            ),
            models.CheckConstraint(
                condition=~models.Q(success=True, failure_kind__gt=""),
                name="episode_success_has_no_failure",
            ),
        ]
        indexes = [models.Index(fields=["run", "status"], name="episode_run_status")]

    def __str__(self) -> str:
        return f"{self.instance}#{self.attempt} ({self.status})"

    @property
    def instance(self) -> str:
        """``template@seed``, and ``/L1`` or ``/L2`` when not at L3."""
        return f"{self.template}@{self.seed}" + (f"/L{self.level}" if self.level != 3 else "")


class ModelEndpoint(models.Model):
    """A named OpenAI-compatible endpoint an agent spec may name (``endpoint=NAME``): its URL,
    model and key, registered by a site admin (``project`` empty: every project's) or, where
    ``WAYPOINT_PROJECT_ENDPOINTS`` allows, by a project's admin for that project. The key is
    sent to this URL only and is never shown again, by any API, page or log."""

    project = models.ForeignKey(
        Project,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="model_endpoints",
        help_text="Empty: a site endpoint, for every project.",
    )
    name = models.SlugField(max_length=64)
    url = models.URLField(max_length=500, help_text="The API's base URL, e.g. https://host/v1.")
    model = models.CharField(max_length=200)
    api_key = models.CharField(max_length=500, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["name"],
                condition=models.Q(project__isnull=True),
                name="endpoint_unique_site_name",
            ),
            models.UniqueConstraint(
                fields=["project", "name"],
                condition=models.Q(project__isnull=False),
                name="endpoint_unique_project_name",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:  # never the key
        return f"<ModelEndpoint {self.name} {self.url} {self.model}>"

    @property
    def scope(self) -> str:
        return "project" if self.project_id else "site"

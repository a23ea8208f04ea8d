"""A generation of environments (``manage.py generate_environments``, the environments page)
and each environment it made: generated, inspected, solved on a device, checked for memory,
installed, or kept with the reason it failed.

A generation is a job (kind ``generate``) whose runner hands each environment to a Celery task
of its own (``environments.pipeline``); each task claims its row with a conditional UPDATE, so
a message delivered twice builds it once. ``count`` is how many verified environments are
wanted: an environment that fails is replaced by the next index, up to ``max_attempts``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from trajectories.models import Blob, Job, Project, Trajectory


class GeneratorKind(models.TextChoices):
    PROCEDURAL = "procedural", "Procedural"
    LLM = "llm", "LLM (STAMP's scenario, task and webpage agents)"


class Generation(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="generations")
    job = models.OneToOneField(
        Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="generation"
    )
    generator = models.CharField(max_length=16, choices=GeneratorKind.choices)
    seed = models.PositiveIntegerField()
    count = models.PositiveIntegerField(help_text="Verified environments wanted.")
    max_attempts = models.PositiveIntegerField(help_text="Environments generated at most.")
    domains = models.JSONField(default=list, blank=True)
    devices = models.JSONField(default=list, help_text="The pool: [{serial, adb_server}].")
    options = models.JSONField(default=dict, blank=True)
    next_index = models.PositiveIntegerField(default=0, help_text="The next index handed out.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"generation {self.pk} ({self.generator}, seed {self.seed}, {self.count})"


class EnvironmentStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    VERIFIED = "verified", "Verified"
    FAILED = "failed", "Failed"


class Stage(models.TextChoices):
    """Where an environment is in the pipeline, or where it failed."""

    GENERATE = "generate", "Generation"
    INSPECT = "inspect", "Static inspection"
    SOLVE = "solve", "Dynamic test (generic solver)"
    MEMORY = "memory", "Memory-necessity check"
    INSTALL = "install", "Installation"
    TRAINING = "training", "Reasoning and critic"
    DONE = "done", "Done"


class GeneratedEnvironment(models.Model):
    generation = models.ForeignKey(
        Generation, on_delete=models.CASCADE, related_name="environments"
    )
    index = models.PositiveIntegerField()
    status = models.CharField(
        max_length=16, choices=EnvironmentStatus.choices, default=EnvironmentStatus.QUEUED
    )
    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.GENERATE)
    reason = models.TextField(blank=True, help_text="Why it failed, at its stage.")
    slug = models.CharField(max_length=64, blank=True)
    label = models.CharField(max_length=200, blank=True)
    version = models.CharField(max_length=40, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    archive = models.ForeignKey(
        Blob, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    domain = models.CharField(max_length=40, blank=True)
    report = models.JSONField(default=dict, blank=True)
    trajectory = models.ForeignKey(
        Trajectory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    seconds = models.FloatField(default=0)
    worker = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    starts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["generation", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["generation", "index"], name="generated_environment_unique_index"
            )
        ]

    def __str__(self) -> str:
        return f"environment {self.index} of generation {self.generation_id}: {self.status}"

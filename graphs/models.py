"""Memory graphs and their per-screen embedding cache.

A graph's nodes, edges and member screens live in its ``file`` (an .npz with the node matrix
and a JSON document), not in rows: a graph of 100,000 nodes loads in one read. The rows keep
what lists and the API show: version, parameters, inputs, status and sizes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.conf import settings
from django.db import models

from trajectories.models import Job, Project, Screen


class ScreenEmbedding(models.Model):
    """One screen's vector under one embedder (float32, L2-normalised), computed once."""

    screen = models.ForeignKey(Screen, on_delete=models.CASCADE, related_name="embeddings")
    embedder = models.CharField(max_length=100)
    vector = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["screen", "embedder"], name="screenembedding_unique_embedder"
            )
        ]

    def __str__(self) -> str:
        return f"screen {self.screen_id} by {self.embedder}"

    def as_array(self) -> np.ndarray:
        return np.frombuffer(bytes(self.vector), dtype=np.float32)


class GraphStatus(models.TextChoices):
    BUILDING = "building", "Building"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


def graph_file_name(instance: models.Model, filename: str) -> str:
    return f"graphs/{instance.project_id}/{filename}"


class BuiltGraph(models.Model):
    """What every built graph has: its version in the project, the parameters and inputs it
    was built with, the job that built it, its sizes and its stored ``file``."""

    version = models.PositiveIntegerField()
    params = models.JSONField(default=dict)
    inputs = models.JSONField(default=dict)
    status = models.CharField(
        max_length=16, choices=GraphStatus.choices, default=GraphStatus.BUILDING
    )
    message = models.TextField(blank=True)
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    node_count = models.PositiveIntegerField(default=0)
    edge_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    file = models.FileField(upload_to=graph_file_name, blank=True, max_length=500)

    class Meta:
        abstract = True

    @classmethod
    def next_version(cls, **scope: Any) -> int:
        """The version a new graph of ``scope`` (its project, and app) gets: one past the last."""
        latest = cls.objects.filter(**scope).aggregate(v=models.Max("version"))["v"]
        return (latest or 0) + 1


class MemoryGraph(BuiltGraph):
    """One version of a project's subgoal memory graph (paper §3.2).

    ``params``: tau, theta, k, embedder, structure, granularity. ``inputs``: the filter used and
    the keys of the trajectories built from (trajectory uids, as exports name them), in build
    order. ``parent`` is the graph this one extended, for incremental builds.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memory_graphs")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="extensions"
    )

    class Meta:
        ordering = ["project", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "version"], name="memorygraph_unique_version"
            )
        ]

    def __str__(self) -> str:
        return f"memory graph v{self.version} of {self.project}"


class AppGraph(BuiltGraph):
    """One version of an app's knowledge graph (UI-KOBE): UI states and single-action
    transitions of one package, built from a project's trajectories."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="app_graphs")
    app = models.CharField(max_length=255, help_text="The package name.")

    class Meta:
        ordering = ["project", "app", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "app", "version"], name="appgraph_unique_version"
            )
        ]

    def __str__(self) -> str:
        return f"app graph v{self.version} of {self.app}"

"""What the graph endpoints read and answer."""

from __future__ import annotations

import re

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from trajectories.models import SubgoalSuccess
from trajectories.serializers import FiltersField, JobSerializer, absolute
from trajectories.validation import MAX_INT

from .build import GRANULARITIES, MAX_K, STRUCTURES
from .embedders import EMBEDDERS
from .models import MemoryGraph


class GraphParamsSerializer(serializers.Serializer):
    tau = serializers.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        help_text="τ: a screen joins the nearest node if their cosine is at least this (0.9).",
    )
    theta = serializers.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        help_text="θ: an outgoing subgoal of a node with the same target and success label is "
        "a duplicate if their intents' cosine exceeds this (0.9).",
    )
    k = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_K, help_text="Nodes retrieved per query (1)."
    )
    embedder = serializers.ChoiceField(
        choices=sorted(EMBEDDERS), required=False, help_text="structure (default) or openai."
    )
    structure = serializers.ChoiceField(
        choices=STRUCTURES, required=False, help_text="graph (default) or flat: no merging."
    )
    granularity = serializers.ChoiceField(
        choices=GRANULARITIES,
        required=False,
        help_text="subgoal (default), action (each step an edge) or task (each trajectory one).",
    )


class GraphBuildRequestSerializer(serializers.Serializer):
    params = GraphParamsSerializer(required=False, default=dict)
    filters = FiltersField(
        child=serializers.JSONField(allow_null=True),
        required=False,
        default=dict,
        help_text="Which trajectories, as the trajectory list filters them (apps, tasks, "
        "status, …).",
    )
    approved_only = serializers.BooleanField(
        required=False, default=False, help_text="Only approved trajectories."
    )
    extend = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_INT,
        help_text="A graph of the project to extend with the trajectories it does not hold yet.",
    )


class MemoryGraphSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="Who created it; null when no user did, or that user was deleted.",
    )
    job = JobSerializer(read_only=True, allow_null=True)
    parent = serializers.SerializerMethodField(help_text="The version this graph extended.")
    url = serializers.SerializerMethodField()
    export_url = serializers.SerializerMethodField()
    retrieve_url = serializers.SerializerMethodField()

    class Meta:
        model = MemoryGraph
        fields = [
            "id",
            "url",
            "project",
            "version",
            "status",
            "message",
            "params",
            "inputs",
            "node_count",
            "edge_count",
            "parent",
            "job",
            "created_by",
            "created_at",
            "export_url",
            "retrieve_url",
        ]

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_parent(self, graph: MemoryGraph) -> int | None:
        return graph.parent.version if graph.parent_id else None

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, graph: MemoryGraph) -> str:
        return absolute(self.context, reverse("api-graph", args=[graph.pk]))

    @extend_schema_field(OpenApiTypes.URI)
    def get_export_url(self, graph: MemoryGraph) -> str:
        return absolute(self.context, reverse("api-graph-export", args=[graph.pk]))

    @extend_schema_field(OpenApiTypes.URI)
    def get_retrieve_url(self, graph: MemoryGraph) -> str:
        return absolute(self.context, reverse("api-graph-retrieve", args=[graph.pk]))


SURROGATE = re.compile("[\ud800-\udfff]")


class ProhibitSurrogates(ProhibitSurrogateCharactersValidator):
    """DRF's refusal of lone surrogates (no database stores them), word for word, found by a
    regular expression: DRF's walks the text a character at a time in Python, 4 ms for a
    screenshot's base64 (the most of a retrieval's time outside the search)."""

    def __call__(self, value: object) -> None:
        found = SURROGATE.search(str(value))
        if found:
            code_point = ord(found.group())
            raise ValidationError(self.message.format(code_point=code_point), code=self.code)


class LongTextField(serializers.CharField):
    """A CharField for long texts (a base64 image, a UI dump): the same checks, the surrogate
    one at C speed (:class:`ProhibitSurrogates`)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.validators = [
            ProhibitSurrogates() if isinstance(v, ProhibitSurrogateCharactersValidator) else v
            for v in self.validators
        ]


class RetrieveUploadSerializer(serializers.Serializer):
    screenshot = serializers.FileField(help_text="The current screen: PNG, JPEG or WebP.")
    xml = LongTextField(
        required=False, allow_blank=True, help_text="Its uiautomator dump, if there is one."
    )
    k = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_K, help_text="Nodes to return (the graph's k)."
    )
    task = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=2000,
        help_text="The task's goal: the memory block puts the subgoals most relevant to it first.",
    )


class RetrieveJSONSerializer(serializers.Serializer):
    screenshot = LongTextField(help_text="The current screen's image bytes, base64.")
    xml = LongTextField(
        required=False, allow_blank=True, help_text="Its uiautomator dump, if there is one."
    )
    k = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_K, help_text="Nodes to return (the graph's k)."
    )
    task = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=2000,
        help_text="The task's goal: the memory block puts the subgoals most relevant to it first.",
    )


class RetrievedSubgoalSerializer(serializers.Serializer):
    intent = serializers.CharField()
    effect = serializers.CharField()
    behaviour = serializers.CharField()
    success = serializers.ChoiceField(choices=SubgoalSuccess.choices)
    target = serializers.IntegerField(help_text="The node the subgoal ended at.")
    trajectory = serializers.CharField(help_text="The trajectory it came from (its uid).")
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    task = serializers.CharField(help_text="The task's uid.")
    duplicates = serializers.IntegerField(help_text="Later subgoals dropped as duplicates.")


class RetrievedNodeSerializer(serializers.Serializer):
    node = serializers.IntegerField(help_text="The node's index in the graph.")
    similarity = serializers.FloatField(help_text="Cosine with the node's running mean.")
    size = serializers.IntegerField(help_text="Screens merged into the node.")
    screenshot = serializers.CharField(help_text="sha256 of a member screen's screenshot.")
    subgoals = RetrievedSubgoalSerializer(many=True)


class RetrievalSerializer(serializers.Serializer):
    graph = serializers.IntegerField(help_text="The graph's version.")
    k = serializers.IntegerField()
    nodes = RetrievedNodeSerializer(many=True)
    memory_block = serializers.CharField(help_text="The text an agent puts in its prompt.")
    timing_ms = serializers.DictField(child=serializers.FloatField())

"""The shape of import and export requests in the REST API."""

from __future__ import annotations

from rest_framework import serializers

from trajectories.serializers import FiltersField

from .catalogue import EXPORTERS, IMPORTERS
from .detect import AUTO


def format_field(kind: str, known: list[str], default: str, help_text: str) -> serializers.Field:
    """A format name: an enum in the schema, refused with the list of known ones."""
    message = f"unknown {kind} format '{{input}}' (known: {', '.join(known)})"
    return serializers.ChoiceField(
        choices=known,
        default=default,
        help_text=help_text,
        error_messages={"invalid_choice": message},
    )


class ImportRequestSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="A .zip or .tar of the format's folder layout.")
    format = format_field(
        "import",
        [AUTO, *sorted(IMPORTERS)],
        AUTO,
        "An import format, or auto to tell it from the archive.",
    )
    as_copies = serializers.BooleanField(
        default=False,
        help_text="Give every trajectory a new id and record its origin in "
        "metadata.copied_from (to import an export of another project on this instance).",
    )


class ExportRequestSerializer(serializers.Serializer):
    format = format_field("export", sorted(EXPORTERS), "waypoint", "An export format.")
    filters = FiltersField(
        child=serializers.JSONField(allow_null=True),
        required=False,
        default=dict,
        help_text="Which trajectories: any of status, outcome, source, task (a task uid), "
        "tasks, apps and trajectories (lists), recorded_from and recorded_to (YYYY-MM-DD), "
        "annotator (a user name).",
    )
    options = serializers.DictField(
        child=serializers.JSONField(allow_null=True),
        required=False,
        default=dict,
        help_text="Per format; stamp-sft: k, max_side, memory_ratio, thought, trainable_only.",
    )
    split = serializers.DictField(
        child=serializers.JSONField(allow_null=True),
        required=False,
        default=dict,
        help_text='For the dataset formats: {"ratios": {"train": 0.9, "test": 0.1}, '
        '"by": "trajectory" | "task" | "app", "seed": 0}.',
    )

"""The labels API's shapes: the labels of a trajectory, and one request per edit.

Requests check types only; the domain's rules are the services' (``trajectories.validation``).
Every write request carries ``version``, the trajectory version the client last saw.
"""

from __future__ import annotations

from rest_framework import serializers

from trajectories.models import AnchorType, Relation, Status, SubgoalSuccess
from trajectories.serializers import FiltersField
from trajectories.validation import MAX_INT

from .models import ProposalStatus
from .proposers import DEFAULT_PROPOSER, PROPOSERS

TYPE_HELP = "The anchor type: " + ", ".join(AnchorType.values) + "."


def anchor_type_field(**kwargs) -> serializers.ChoiceField:
    """An anchor type: an enum in the schema, refused with the known ones as the service does."""
    known = ", ".join(AnchorType.values)
    return serializers.ChoiceField(
        choices=AnchorType.choices,
        help_text=TYPE_HELP,
        error_messages={"invalid_choice": f"unknown anchor type '{{input}}' (known: {known})"},
        **kwargs,
    )


class VersionSerializer(serializers.Serializer):
    version = serializers.IntegerField(help_text="The trajectory version this edit applies to.")


class StaleSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Who changed the trajectory, and when.")
    version = serializers.IntegerField(help_text="The stored version: reload and edit that.")


class EvidenceSerializer(serializers.Serializer):
    bounds = serializers.ListField(
        child=serializers.IntegerField(),
        min_length=4,
        max_length=4,
        required=False,
        help_text="[x1, y1, x2, y2] in screenshot pixels.",
    )
    resource_id = serializers.CharField(required=False, allow_blank=True)
    text = serializers.CharField(required=False, allow_blank=True)
    content_desc = serializers.CharField(required=False, allow_blank=True)
    path = serializers.CharField(required=False, allow_blank=True)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if isinstance(data, dict) and "class" in data:
            value["class"] = str(data["class"])
        return value


# ---------------------------------------------------------------- what is shown


class SubgoalLabelSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    text = serializers.CharField()
    effect = serializers.CharField()
    behaviour = serializers.CharField()
    success = serializers.ChoiceField(choices=SubgoalSuccess.choices, allow_blank=True)
    origin = serializers.CharField()


class StepLabelSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    thought = serializers.CharField()
    summary = serializers.CharField()
    memory = serializers.CharField()
    trainable = serializers.BooleanField()


class MemoryTargetLabelSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    value = serializers.CharField()
    encode_step = serializers.IntegerField()
    evidence = EvidenceSerializer()
    retrieve_steps = serializers.ListField(child=serializers.IntegerField())


class AnchorLabelSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    step = serializers.IntegerField()
    type = anchor_type_field()
    content = serializers.CharField()
    description = serializers.CharField()
    evidence = EvidenceSerializer()


class LinkLabelSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    source = serializers.CharField(help_text="The source anchor's key.")
    target = serializers.CharField(help_text="The target anchor's key.")
    relation = serializers.ChoiceField(choices=Relation.choices)
    critical = serializers.BooleanField()


class ProblemSerializer(serializers.Serializer):
    kind = serializers.CharField()
    message = serializers.CharField()
    step = serializers.IntegerField(allow_null=True, help_text="The step to look at.")


class LabelsSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Status.choices)
    can_undo = serializers.BooleanField()
    can_redo = serializers.BooleanField()
    subgoals = SubgoalLabelSerializer(many=True)
    steps = StepLabelSerializer(many=True)
    memory_targets = MemoryTargetLabelSerializer(many=True)
    anchors = AnchorLabelSerializer(many=True)
    links = LinkLabelSerializer(many=True)
    problems = ProblemSerializer(
        many=True, help_text="What is missing before the labels can be submitted."
    )


class HistoryEventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    actor = serializers.CharField(allow_null=True)
    kind = serializers.CharField()
    object_type = serializers.CharField()
    object_id = serializers.CharField()
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)


class CommentSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    step = serializers.IntegerField(
        source="step_index", allow_null=True, required=False, help_text="None: the whole thing."
    )
    text = serializers.CharField()
    author = serializers.CharField(source="author.username", read_only=True, allow_null=True)
    created_at = serializers.DateTimeField(read_only=True)
    resolved = serializers.BooleanField(read_only=True)
    resolved_by = serializers.CharField(
        source="resolved_by.username", read_only=True, allow_null=True, default=None
    )
    resolved_at = serializers.DateTimeField(read_only=True, allow_null=True)


class CommentResolveSerializer(serializers.Serializer):
    resolved = serializers.BooleanField(help_text="True: resolved; false: open again.")


class AssignmentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    trajectory = serializers.IntegerField(source="trajectory_id")
    copy_of = serializers.IntegerField(source="trajectory.copy_of_id", allow_null=True)
    annotator = serializers.CharField(source="annotator.username")
    status = serializers.ChoiceField(source="trajectory.status", choices=Status.choices)


class PairAgreementSerializer(serializers.Serializer):
    annotators = serializers.ListField(child=serializers.CharField())
    trajectories = serializers.IntegerField()
    boundary_f1 = serializers.FloatField()
    kappa = serializers.FloatField(allow_null=True)
    anchor_agreement = serializers.FloatField(allow_null=True)


class TrajectoryAgreementSerializer(PairAgreementSerializer):
    trajectory = serializers.IntegerField()
    copy = serializers.IntegerField()


class AgreementSerializer(serializers.Serializer):
    k = serializers.IntegerField(help_text="Boundary tolerance in steps.")
    overall = PairAgreementSerializer()
    pairs = PairAgreementSerializer(many=True)
    trajectories = TrajectoryAgreementSerializer(many=True)
    waiting = serializers.IntegerField(
        help_text="Pairs not compared yet: one or both annotators have not submitted."
    )


# ---------------------------------------------------------------- requests


class SplitRequestSerializer(VersionSerializer):
    step = serializers.IntegerField(help_text="The step that starts the new subgoal.")


class SubgoalPatchSerializer(VersionSerializer):
    text = serializers.CharField(required=False, allow_blank=True)
    effect = serializers.CharField(required=False, allow_blank=True)
    behaviour = serializers.CharField(required=False, allow_blank=True)
    success = serializers.ChoiceField(
        choices=SubgoalSuccess.choices, allow_blank=True, required=False
    )
    start = serializers.IntegerField(required=False, help_text="Moves the start boundary.")
    end = serializers.IntegerField(required=False, help_text="Moves the end boundary.")


class StepPatchSerializer(VersionSerializer):
    thought = serializers.CharField(required=False, allow_blank=True)
    summary = serializers.CharField(required=False, allow_blank=True)
    memory = serializers.CharField(required=False, allow_blank=True)
    trainable = serializers.BooleanField(required=False)


class MemoryTargetRequestSerializer(VersionSerializer):
    key = serializers.CharField()
    value = serializers.CharField(allow_blank=True)
    encode_step = serializers.IntegerField()
    retrieve_steps = serializers.ListField(child=serializers.IntegerField(), required=False)
    evidence = EvidenceSerializer(required=False)


class MemoryTargetPatchSerializer(VersionSerializer):
    key = serializers.CharField(required=False)
    value = serializers.CharField(required=False, allow_blank=True)
    encode_step = serializers.IntegerField(required=False)
    retrieve_steps = serializers.ListField(child=serializers.IntegerField(), required=False)
    evidence = EvidenceSerializer(required=False)


class AnchorRequestSerializer(VersionSerializer):
    step = serializers.IntegerField()
    type = anchor_type_field()
    content = serializers.CharField()
    description = serializers.CharField(required=False, allow_blank=True, default="")
    evidence = EvidenceSerializer(required=False)


class AnchorPatchSerializer(VersionSerializer):
    step = serializers.IntegerField(required=False)
    type = anchor_type_field(required=False)
    content = serializers.CharField(required=False)
    description = serializers.CharField(required=False, allow_blank=True)
    evidence = EvidenceSerializer(required=False)


class LinkRequestSerializer(VersionSerializer):
    source = serializers.CharField(help_text="The source anchor's key, e.g. a1.")
    target = serializers.CharField(help_text="The target anchor's key.")
    relation = serializers.ChoiceField(choices=Relation.choices)
    critical = serializers.BooleanField(required=False, default=False)


class ReviewCommentRequestSerializer(serializers.Serializer):
    step = serializers.IntegerField(required=False, allow_null=True)
    text = serializers.CharField()


class ReviewRequestSerializer(VersionSerializer):
    decision = serializers.ChoiceField(choices=["approve", "reject", "send_back"])
    comments = ReviewCommentRequestSerializer(many=True, required=False)


class AssignRequestSerializer(serializers.Serializer):
    trajectories = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_INT), min_length=1
    )
    annotators = serializers.ListField(
        child=serializers.CharField(), min_length=1, help_text="Usernames."
    )
    per_trajectory = serializers.ChoiceField(
        choices=[1, 2], default=1, help_text="2: the second annotator labels a copy."
    )
    spread = serializers.BooleanField(
        default=True,
        help_text="Share the trajectories out evenly; false: every annotator gets every one "
        "(per_trajectory 1 only).",
    )


class TrajectoryProposeRequestSerializer(serializers.Serializer):
    proposer = serializers.ChoiceField(choices=sorted(PROPOSERS), default=DEFAULT_PROPOSER)


class ProposeRequestSerializer(TrajectoryProposeRequestSerializer):
    filters = FiltersField(
        child=serializers.JSONField(allow_null=True),
        required=False,
        default=dict,
        help_text="Which trajectories, as for an export: status, outcome, source, task, tasks, "
        "apps, trajectories (uuids), recorded_from, recorded_to, annotator.",
    )


class ProposalSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    proposer = serializers.CharField()
    model = serializers.CharField()
    prompt_version = serializers.CharField()
    status = serializers.ChoiceField(choices=ProposalStatus.choices)
    payload = serializers.JSONField()
    decisions = serializers.JSONField()
    raw_output = serializers.CharField()
    error = serializers.CharField()
    duration_ms = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)


class ProposalDecisionSerializer(serializers.Serializer):
    version = serializers.IntegerField(required=False)
    items = serializers.JSONField(
        default="all", help_text='"all", or a list of part:index like "subgoals:0"'
    )
    edited = serializers.DictField(
        required=False, default=dict, help_text="Fields changed as one item is accepted."
    )


class SkippedItemSerializer(serializers.Serializer):
    item = serializers.CharField(help_text='part:index, e.g. "subgoals:1"')
    name = serializers.CharField(help_text="The item as the workspace names it.")
    reason = serializers.CharField(help_text="Why it could not be accepted.")


class AcceptedLabelsSerializer(LabelsSerializer):
    accepted = serializers.ListField(
        child=serializers.CharField(), help_text="The items that became labels (part:index)."
    )
    skipped = SkippedItemSerializer(
        many=True,
        help_text='Items "all" could not accept (an overlap, a copy of a label): still pending.',
    )


class ProposalAcceptSerializer(ProposalDecisionSerializer):
    """Accepting is a label edit: it names the version of the labels it is made on."""

    version = serializers.IntegerField(
        error_messages={"required": "send the version of the labels you accept into"}
    )

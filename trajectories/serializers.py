"""What the REST API shows of the domain model, and the shape of its requests.

Serializers only read: every write goes through a service (``do_*``). Fields that are computed
(URLs, the canonical action, counts) are typed with ``extend_schema_field`` so the OpenAPI
schema describes them exactly.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.urls import reverse
from django.utils import timezone
from django.utils.functional import cached_property
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import ISO_8601, serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.settings import api_settings

from .gold import GoldRule, metadata_data, task_data, variables_data
from .models import (
    ActionType,
    Anchor,
    Blob,
    Job,
    JobStatus,
    Membership,
    MemoryTarget,
    Project,
    Relation,
    Role,
    Screen,
    Step,
    Subgoal,
    Task,
    Trajectory,
)


def absolute(context: dict[str, Any], url: str) -> str:
    """An absolute URL when the serializer has a request, else the path."""
    request = context.get("request")
    return request.build_absolute_uri(url) if request is not None else url


ZERO = timedelta(0)


def object_url(context: dict[str, Any], name: str, pk: int) -> str:
    """The URL of route ``name`` for object ``pk``, absolute when there is a request."""
    return absolute(context, reverse(name, args=[pk]))


def blob_url(context: dict[str, Any], blob: Blob) -> str:
    """The API's URL of a blob, which accepts token authentication."""
    return absolute(context, reverse("api-blob", args=[blob.sha256]))


def gold_rule(context: dict[str, Any]) -> GoldRule | None:
    """Who may see gold here (``trajectories.gold``): the requesting user's rule, kept in the
    context for the whole answer; None without a request (the code's own use sees it all)."""
    rule = context.get("gold")
    if rule is None:
        request = context.get("request")
        if request is None:
            return None
        rule = context["gold"] = GoldRule(request.user)
    return rule


GOLD_HIDDEN = " Null when the project hides gold answers from the requesting user (hide_gold)."


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What is wrong, naming the field or object.")


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as the header `Authorization: Token <token>`.")


# ---------------------------------------------------------------- projects and tasks


class ProjectSerializer(serializers.ModelSerializer):
    """A project, with the requesting user's role and its sizes (annotated by the view)."""

    created_by = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="Who created it; null when no user did, or that user was deleted.",
    )
    role = serializers.SerializerMethodField(help_text="The requesting user's role.")
    task_count = serializers.IntegerField(read_only=True)
    trajectory_count = serializers.IntegerField(read_only=True)
    hide_gold = serializers.BooleanField(
        read_only=True,
        help_text="Gold answers and memory variables are shown only to the project's admins "
        "and site admins.",
    )

    class Meta:
        model = Project
        fields = [
            "id",
            "name",
            "description",
            "created_by",
            "created_at",
            "role",
            "task_count",
            "trajectory_count",
            "hide_gold",
        ]

    @extend_schema_field(serializers.ChoiceField(choices=Role.choices, allow_null=True))
    def get_role(self, project: Project) -> str | None:
        if project.user_role:
            return project.user_role
        request = self.context.get("request")
        return Role.ADMIN if request is not None and request.user.is_superuser else None


class ProjectCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")


class ProjectUpdateSerializer(serializers.Serializer):
    """The settings of a project its admins change; a field left out stays as it is."""

    hide_gold = serializers.BooleanField(
        required=False,
        help_text="Hide gold answers and memory variables from annotators and reviewers.",
    )


class MemberSerializer(serializers.ModelSerializer):
    """A member of a project and their role."""

    user = serializers.IntegerField(source="user_id", read_only=True, help_text="The user's id.")
    username = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = Membership
        fields = ["user", "username", "role"]


class MemberCreateSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150, help_text="The user to add, by name.")
    role = serializers.ChoiceField(choices=Role.choices, default=Role.ANNOTATOR)


class MemberRoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class TaskSerializer(serializers.ModelSerializer):
    """A task; its gold answer only for those who may see the project's gold."""

    gold_answer = serializers.CharField(
        read_only=True, allow_null=True, help_text="The answer a run is graded by." + GOLD_HIDDEN
    )

    class Meta:
        model = Task
        fields = [
            "id",
            "project",
            "uid",
            "goal",
            "apps",
            "intent",
            "difficulty",
            "gold_answer",
            "grading_rule",
            "memory_items",
            "created_at",
        ]

    def to_representation(self, task: Task) -> dict[str, Any]:
        data = super().to_representation(task)
        rule = gold_rule(self.context)
        if rule is None:
            return data
        cached = Task.project.is_cached(task)
        visible = rule.visible(task.project) if cached else rule.visible_in(task.project_id)
        return task_data(data, visible)


class TaskSummarySerializer(serializers.ModelSerializer):
    class Meta:
        model = Task
        fields = ["id", "uid", "goal"]


# ---------------------------------------------------------------- screens and steps


class ScreenSerializer(serializers.ModelSerializer):
    """A screen; its blobs must be loaded with it (``select_related``)."""

    screenshot_url = serializers.SerializerMethodField()
    ui_xml_url = serializers.SerializerMethodField()
    visible_memory = serializers.SerializerMethodField(
        help_text="The virtual device's memory variables this screen shows; without their "
        "values (value, text) when the project hides them from the requesting user."
    )

    class Meta:
        model = Screen
        fields = [
            "id",
            "width",
            "height",
            "package",
            "activity",
            "captured_at",
            "screenshot_url",
            "ui_xml_url",
            "visible_memory",
        ]

    @extend_schema_field(OpenApiTypes.URI)
    def get_screenshot_url(self, screen: Screen) -> str:
        return blob_url(self.context, screen.screenshot)

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_ui_xml_url(self, screen: Screen) -> str | None:
        return blob_url(self.context, screen.ui_xml) if screen.ui_xml_id else None

    @extend_schema_field(serializers.ListField(child=serializers.DictField()))
    def get_visible_memory(self, screen: Screen) -> list[dict[str, Any]]:
        rule = gold_rule(self.context)
        if rule is None or not screen.visible_memory:
            return screen.visible_memory
        return variables_data(
            screen.visible_memory, rule.visible_in_trajectory(screen.trajectory_id)
        )


class ActionSerializer(serializers.Serializer):
    """The canonical action: ``type`` plus the fields of that type, in screenshot pixels."""

    type = serializers.ChoiceField(choices=ActionType.choices)
    x = serializers.IntegerField(required=False, help_text="click, long_press, swipe")
    y = serializers.IntegerField(required=False, help_text="click, long_press, swipe")
    x2 = serializers.IntegerField(required=False, help_text="swipe: end point")
    y2 = serializers.IntegerField(required=False, help_text="swipe: end point")
    duration_ms = serializers.IntegerField(required=False, help_text="long_press, swipe, wait")
    # Taken as sent (typed text may be a space): these are not trimmed.
    text = serializers.CharField(required=False, trim_whitespace=False, help_text="type, answer")
    keycode = serializers.CharField(
        required=False, trim_whitespace=False, help_text="key, e.g. KEYCODE_ENTER"
    )
    package = serializers.CharField(required=False, trim_whitespace=False, help_text="open_app")
    app_label = serializers.CharField(required=False, trim_whitespace=False, help_text="open_app")
    status = serializers.ChoiceField(
        choices=["success", "failure"], required=False, help_text="terminate"
    )


class StepSerializer(serializers.ModelSerializer):
    action = serializers.SerializerMethodField()
    settle_ms = serializers.IntegerField(read_only=True, allow_null=True)
    screen = ScreenSerializer(read_only=True, help_text="The screen before the action.")

    class Meta:
        model = Step
        fields = [
            "index",
            "action",
            "target",
            "thought",
            "summary",
            "memory",
            "trainable",
            "action_sent_at",
            "settled_at",
            "settle_ms",
            "screen",
        ]

    @extend_schema_field(ActionSerializer)
    def get_action(self, step: Step) -> dict[str, Any]:
        return {"type": step.action_type, **step.action}


# ---------------------------------------------------------------- trajectories and labels


class SubgoalSerializer(serializers.ModelSerializer):
    class Meta:
        model = Subgoal
        fields = ["id", "start", "end", "text", "effect", "behaviour", "success", "origin"]


class MemoryTargetSerializer(serializers.ModelSerializer):
    class Meta:
        model = MemoryTarget
        fields = ["id", "key", "value", "encode_step", "evidence", "retrieve_steps"]


class AnchorLinkSerializer(serializers.Serializer):
    target = serializers.CharField(source="target.key", help_text="The target anchor's key.")
    relation = serializers.ChoiceField(choices=Relation.choices)
    critical = serializers.BooleanField()


class AnchorSerializer(serializers.ModelSerializer):
    links = AnchorLinkSerializer(
        source="links_out", many=True, read_only=True, help_text="Links from this anchor."
    )

    class Meta:
        model = Anchor
        fields = ["id", "key", "step_index", "type", "content", "description", "evidence", "links"]


class DeviceSerializer(serializers.Serializer):
    serial = serializers.CharField(source="device_serial")
    model = serializers.CharField(source="device_model")
    android_version = serializers.CharField()
    width = serializers.IntegerField(source="screen_width")
    height = serializers.IntegerField(source="screen_height")
    density = serializers.IntegerField()


class CountsSerializer(serializers.Serializer):
    steps = serializers.IntegerField()
    subgoals = serializers.IntegerField()
    memory_targets = serializers.IntegerField()
    anchors = serializers.IntegerField()
    anchor_links = serializers.IntegerField()


class TrajectorySerializer(serializers.ModelSerializer):
    """A trajectory in a list; the view loads its task and recorder with it."""

    task = TaskSummarySerializer(read_only=True)
    recorded_by = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="The user who recorded it; null when none of this instance's users did "
        "(an import: recorder_name names the recorder) or that user was deleted.",
    )
    url = serializers.SerializerMethodField()

    class Meta:
        model = Trajectory
        fields = [
            "id",
            "uid",
            "url",
            "project",
            "task",
            "source",
            "status",
            "outcome",
            "step_count",
            "device_model",
            "recorded_by",
            "recorder_name",
            "recorded_at",
            "created_at",
            "updated_at",
            "version",
        ]

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, trajectory: Trajectory) -> str:
        return object_url(self.context, "api-trajectory", trajectory.pk)

    def to_representation(self, trajectory: Trajectory) -> dict[str, Any]:
        """The fields above, read directly: DRF's generic loop over 16 fields was a third of
        the CPU of a 50-row list under load (bench/bench_load.py). Dates still go through
        their fields. The same answer as the generic loop (tests/trajectories/
        test_request_costs.py); a subclass with more fields gets the generic loop."""
        if type(self) is not TrajectorySerializer:
            return super().to_representation(trajectory)
        dates = self._date_fields
        task, recorder = trajectory.task, trajectory.recorded_by
        return {
            "id": trajectory.pk,
            "uid": str(trajectory.uid),
            "url": self.get_url(trajectory),
            "project": trajectory.project_id,
            "task": None if task is None else {"id": task.pk, "uid": task.uid, "goal": task.goal},
            "source": trajectory.source,
            "status": trajectory.status,
            "outcome": trajectory.outcome,
            "step_count": trajectory.step_count,
            "device_model": trajectory.device_model,
            "recorded_by": None if recorder is None else recorder.username,
            "recorder_name": trajectory.recorder_name,
            **{
                name: None if value is None else self._datetime(field, value)
                for name, field in dates
                for value in [getattr(trajectory, name)]
            },
            "version": trajectory.version,
        }

    @cached_property
    def _date_fields(self) -> list[tuple[str, serializers.Field]]:
        return [(name, self.fields[name]) for name in ("recorded_at", "created_at", "updated_at")]

    @cached_property
    def _utc_output(self) -> bool:
        """Whether dates are written in UTC as ISO 8601 (the defaults): then a UTC date needs
        no conversion, and ``isoformat`` with a Z is what DRF's field writes, at a fifth of
        its cost (three dates a row were a sixth of the API list's CPU)."""
        return api_settings.DATETIME_FORMAT == ISO_8601 and str(
            timezone.get_current_timezone()
        ) in ("UTC", "Etc/UTC")

    def _datetime(self, field: serializers.Field, value: datetime) -> str:
        if self._utc_output and value.utcoffset() == ZERO:
            return value.replace(tzinfo=None).isoformat() + "Z"
        return field.to_representation(value)


class TrajectoryDetailSerializer(TrajectorySerializer):
    """A trajectory with its labels; the view prefetches every relation read here."""

    task = TaskSerializer(read_only=True)
    device = DeviceSerializer(source="*", read_only=True)
    counts = serializers.SerializerMethodField()
    steps_url = serializers.SerializerMethodField()
    final_screen = ScreenSerializer(read_only=True, allow_null=True)
    subgoals = SubgoalSerializer(many=True, read_only=True)
    memory_targets = MemoryTargetSerializer(many=True, read_only=True)
    anchors = AnchorSerializer(many=True, read_only=True)
    metadata = serializers.SerializerMethodField(
        help_text="What else is known of it (the recording, the virtual device's seed and "
        "apps, an agent's turns); without gold answers or variables when the project hides "
        "them from the requesting user."
    )

    class Meta(TrajectorySerializer.Meta):
        fields = TrajectorySerializer.Meta.fields + [
            "device",
            "counts",
            "steps_url",
            "final_screen",
            "metadata",
            "subgoals",
            "memory_targets",
            "anchors",
        ]

    @extend_schema_field(CountsSerializer)
    def get_counts(self, trajectory: Trajectory) -> dict[str, int]:
        anchors = trajectory.anchors.all()
        return {
            "steps": trajectory.step_count,
            "subgoals": len(trajectory.subgoals.all()),
            "memory_targets": len(trajectory.memory_targets.all()),
            "anchors": len(anchors),
            "anchor_links": sum(len(anchor.links_out.all()) for anchor in anchors),
        }

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_metadata(self, trajectory: Trajectory) -> dict[str, Any]:
        rule = gold_rule(self.context)
        if rule is None:
            return trajectory.metadata
        return metadata_data(trajectory.metadata, rule.visible_in_trajectory(trajectory.pk))

    @extend_schema_field(OpenApiTypes.URI)
    def get_steps_url(self, trajectory: Trajectory) -> str:
        return absolute(self.context, reverse("api-trajectory-steps", args=[trajectory.pk]))


# ---------------------------------------------------------------- jobs


class JobSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="Who created it; null when no user did, or that user was deleted.",
    )
    percent = serializers.IntegerField(read_only=True)
    url = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField(
        help_text="Where to fetch the output file; null until an export has succeeded."
    )

    class Meta:
        model = Job
        fields = [
            "id",
            "url",
            "project",
            "kind",
            "format",
            "status",
            "percent",
            "done",
            "total",
            "counts",
            "message",
            "params",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "download_url",
        ]

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, job: Job) -> str:
        return absolute(self.context, reverse("api-job", args=[job.pk]))

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_download_url(self, job: Job) -> str | None:
        if job.status != JobStatus.SUCCEEDED or not job.output_path:
            return None
        return absolute(self.context, reverse("api-job-download", args=[job.pk]))


UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
UUID_LIST = f"^({UUID}(,{UUID})*)?$"
NAME = {"type": "string", "pattern": "^[^\\x00]*$"}


def _filters_schema() -> dict[str, Any]:
    """The export filters as the selector checks them: known names only, each of its type;
    an empty or null value filters nothing."""
    from .selectors import CHOICES, DATES, LISTS, PAGE_ONLY, TRAJECTORY_FILTERS

    text = {**NAME, "nullable": True}
    properties: dict[str, Any] = {}
    for name, description in TRAJECTORY_FILTERS.items():
        if name in PAGE_ONLY:
            continue
        if name in CHOICES:
            schema = {"type": "string", "nullable": True, "enum": [*CHOICES[name], "", None]}
        elif name in LISTS:
            # A list, or names separated by commas; trajectories are named by their uuid.
            item = {"type": "string", "format": "uuid"} if name == "trajectories" else NAME
            listed = {**text, "pattern": UUID_LIST} if name == "trajectories" else text
            schema = {"nullable": True, "anyOf": [{"type": "array", "items": item}, listed]}
        elif name in DATES:
            # "" filters nothing, as for every filter (a date field left empty).
            empty = {"type": "string", "enum": [""]}
            schema = {"nullable": True, "anyOf": [{"type": "string", "format": "date"}, empty]}
        else:
            schema = dict(text)
        properties[name] = {**schema, "description": description}
    return {"type": "object", "properties": properties, "additionalProperties": False}


@extend_schema_field(_filters_schema())
class FiltersField(serializers.DictField):
    """Which trajectories an export takes (checked by ``selectors.check_trajectory_filters``)."""


@extend_schema_serializer(component_name="AuthToken")
class TokenRequestSerializer(AuthTokenSerializer):
    """DRF's token request, except that a username of spaces alone is a wrong username (401)
    rather than a malformed request (400): the schema allows it, as it allows any name."""

    username = serializers.CharField(label="Username", write_only=True, trim_whitespace=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # Spaces around a name are dropped, as the login page does; spaces alone name nobody.
        attrs["username"] = attrs["username"].strip() or attrs["username"]
        return super().validate(attrs)

"""REST shapes of devices, leases and recording requests."""

from __future__ import annotations

from rest_framework import serializers

from trajectories.serializers import StepSerializer
from trajectories.validation import TERMINATE_STATUSES


class LeaseSerializer(serializers.Serializer):
    holder = serializers.CharField(source="holder.username")
    acquired_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    trajectory = serializers.IntegerField(source="trajectory_id", allow_null=True)


class DeviceStateSerializer(serializers.Serializer):
    serial = serializers.CharField()
    adb_server = serializers.CharField(help_text="host:port of the adb server it is on.")
    state = serializers.CharField(help_text="device, offline, unauthorized...")
    model = serializers.CharField(source="facts.model")
    android_version = serializers.CharField(source="facts.android_version")
    width = serializers.IntegerField(source="facts.width")
    height = serializers.IntegerField(source="facts.height")
    density = serializers.IntegerField(source="facts.density")
    virtual = serializers.BooleanField(source="facts.virtual")
    lease = LeaseSerializer(allow_null=True, help_text="Who drives it, if anyone.")


class AdbServerSerializer(serializers.Serializer):
    server = serializers.CharField()
    error = serializers.CharField(help_text="Empty when the server answered.")
    devices = DeviceStateSerializer(many=True)


class LeaseRequestSerializer(serializers.Serializer):
    seconds = serializers.IntegerField(
        required=False, min_value=10, max_value=3600, help_text="Lease length (default setting)."
    )


class StartRecordingSerializer(serializers.Serializer):
    task = serializers.IntegerField(required=False, help_text="A task of one of your projects.")
    project = serializers.IntegerField(required=False, help_text="With goal: a new task.")
    goal = serializers.CharField(required=False, help_text="With project: the new task's goal.")
    resume = serializers.IntegerField(
        required=False, help_text="An interrupted trajectory to go on recording instead."
    )


class FinishRecordingSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=TERMINATE_STATUSES, default="success")
    answer = serializers.CharField(
        required=False, allow_blank=True, help_text="The answer to the task, graded if known."
    )


class TimingsSerializer(serializers.Serializer):
    action_ms = serializers.FloatField()
    settle_ms = serializers.FloatField()
    capture_ms = serializers.FloatField()
    store_ms = serializers.FloatField()


class RecordedStepSerializer(StepSerializer):
    timings = TimingsSerializer(
        read_only=True, required=False, help_text="How long each part of the step took."
    )

    class Meta(StepSerializer.Meta):
        fields = [*StepSerializer.Meta.fields, "timings"]

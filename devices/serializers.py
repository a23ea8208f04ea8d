"""REST shapes of devices, leases and recording requests."""

from __future__ import annotations

from datetime import datetime

from rest_framework import serializers

from trajectories.serializers import StepSerializer
from trajectories.validation import TERMINATE_STATUSES

from .services.leases import latest_end


class LeaseSerializer(serializers.Serializer):
    holder = serializers.CharField(source="holder.username")
    acquired_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    ends_at_latest = serializers.SerializerMethodField(
        help_text="Renewals stop here: the lease's maximum length, set by an admin."
    )
    trajectory = serializers.IntegerField(source="trajectory_id", allow_null=True)

    def get_ends_at_latest(self, lease) -> datetime:
        return latest_end(lease)


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
    label = serializers.CharField()
    projects = serializers.SerializerMethodField(help_text="Your projects that have the device.")
    lease_max_seconds = serializers.IntegerField(
        source="max_lease_seconds", help_text="The longest a lease on it may last."
    )
    lease = LeaseSerializer(allow_null=True, help_text="Who drives it, if anyone.")

    def get_projects(self, info) -> list[int]:
        return [p.pk for p in info.projects]


class AdbServerSerializer(serializers.Serializer):
    server = serializers.CharField()
    error = serializers.CharField(help_text="Empty when the server answered.")
    devices = DeviceStateSerializer(many=True)


class LeaseRequestSerializer(serializers.Serializer):
    seconds = serializers.IntegerField(
        required=False, min_value=10, max_value=3600, help_text="Lease length (default setting)."
    )


class DeviceSettingsSerializer(serializers.Serializer):
    serial = serializers.CharField()
    label = serializers.CharField()
    projects = serializers.ListField(
        child=serializers.IntegerField(), help_text="Projects whose members use the device."
    )
    max_lease_seconds = serializers.IntegerField(
        allow_null=True, help_text="The device's own lease limit (null: the setting)."
    )
    lease_max_seconds = serializers.IntegerField(help_text="The limit that applies.")


class DeviceUpdateSerializer(serializers.Serializer):
    label = serializers.CharField(required=False, allow_blank=True, max_length=200)
    projects = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        help_text="Every project that has the device (replaces the list).",
    )
    max_lease_seconds = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=60,
        help_text="Longest lease from when it is taken (null: the setting).",
    )


class StartRecordingSerializer(serializers.Serializer):
    task = serializers.IntegerField(required=False, help_text="A task of one of your projects.")
    project = serializers.IntegerField(required=False, help_text="With goal: a new task.")
    goal = serializers.CharField(required=False, help_text="With project: the new task's goal.")
    resume = serializers.IntegerField(
        required=False, help_text="An interrupted trajectory to go on recording instead."
    )
    reset_seed = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=2**31 - 1,
        help_text="Virtual device only: first reset every app to the data of this seed "
        "(carts and notes of earlier recordings go). The device's seed is recorded in the "
        "trajectory's metadata.virtual_device either way.",
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

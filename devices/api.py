"""Devices in the REST API: list, lease, start/resume/finish a recording, act, watch.

A script or an agent records exactly like the console: take the device, start a trajectory,
post canonical actions (each answer is the recorded step), finish. Every endpoint that names a
device checks first that it belongs to one of the user's projects (``access_device``).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction
from django.http import HttpResponse, HttpResponseNotModified
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from trajectories.access import access_project, access_task, access_trajectory, projects_of
from trajectories.api import WaypointAPIView, check_serializer
from trajectories.models import Project, Role, Trajectory
from trajectories.records import TaskRecord
from trajectories.serializers import ActionSerializer, ErrorSerializer, TrajectorySerializer
from trajectories.services import get_or_create_task
from trajectories.validation import InvalidRequest

from .access import (
    access_device,
    can_end_leases,
    check_site_admin,
    is_site_admin,
    lease_max_seconds,
    visible_serials,
)
from .models import Device, Lease
from .serializers import (
    AdbServerSerializer,
    DeviceSettingsSerializer,
    DeviceUpdateSerializer,
    FinishRecordingSerializer,
    LeaseRequestSerializer,
    LeaseSerializer,
    RecordedStepSerializer,
    StartRecordingSerializer,
)
from .services import (
    RecordingError,
    check_driver,
    connect,
    discover_devices,
    do_finish_recording,
    do_release_device,
    do_resume_recording,
    do_start_recording,
    do_take_device,
    find_device,
    record_step,
)
from .services.adb import ServerReport
from .services.inventory import do_update_device
from .services.live import latest_frame

RECORDING_ROLES = (Role.ADMIN, Role.ANNOTATOR)


def _errors(*codes: int) -> dict[int, OpenApiResponse]:
    described = {
        400: "Invalid input; the message names the field.",
        401: "Not authenticated.",
        403: "Your role in the project does not allow recording.",
        404: "No device with this serial on any adb server, or no such task or trajectory "
        "(or not one of your projects').",
        409: "Someone else drives the device, or the recording is not in a state for this.",
        410: "The device disconnected; the trajectory is interrupted with its steps kept.",
        503: "The device is listed but not usable (offline, unauthorized) or did not answer.",
    }
    return {code: OpenApiResponse(ErrorSerializer, description=described[code]) for code in codes}


class DeviceAPIView(WaypointAPIView):
    """Checks the user may use the device named in the URL. Recording errors answer 409, a
    vanished device 410, an unknown one 404, an unusable one 503 (config/errors.py)."""

    device: Device

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if "serial" in kwargs:
            self.device = access_device(request.user, kwargs["serial"])


def leases_by_serial() -> dict[str, Lease]:
    return {
        lease.serial: lease
        for lease in Lease.objects.select_related("holder")
        if not lease.is_expired
    }


def device_reports(user) -> list[ServerReport]:
    """The devices of every adb server that the user may see, with their lease and projects."""
    reports = discover_devices()
    visible = visible_serials(user, [info.serial for r in reports for info in r.devices])
    registered = {
        d.serial: d for d in Device.objects.filter(serial__in=visible).prefetch_related("projects")
    }
    own = None if is_site_admin(user) else set(projects_of(user).values_list("pk", flat=True))
    leases = leases_by_serial()
    for report in reports:
        report.devices = [info for info in report.devices if info.serial in visible]
        for info in report.devices:
            device = registered.get(info.serial)
            info.device = device
            info.projects = [
                p for p in (device.projects.all() if device else []) if own is None or p.pk in own
            ]
            info.label = device.label if device else ""
            info.max_lease_seconds = lease_max_seconds(device)
            info.lease = leases.get(info.serial)
            info.can_end = can_end_leases(user, device or Device(serial=info.serial))
    return reports


def driven_trajectory(serial: str, user) -> Trajectory:
    lease = check_driver(serial, user)
    if lease.trajectory_id is None:
        raise RecordingError(f"Nothing is being recorded on device {serial}; start a trajectory.")
    return access_trajectory(user, lease.trajectory_id)


@extend_schema(tags=["devices"])
class DeviceListView(DeviceAPIView):
    """The devices of your projects on every adb server, with their facts and who drives them.

    Site admins see every device, including those that belong to no project yet.
    """

    @extend_schema(
        summary="Devices across the adb servers",
        responses={200: AdbServerSerializer(many=True), **_errors(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(AdbServerSerializer(device_reports(request.user), many=True).data)


def settings_data(device: Device, user) -> dict[str, Any]:
    own = None if is_site_admin(user) else set(projects_of(user).values_list("pk", flat=True))
    projects = device.projects.all() if device.pk else []
    return {
        "serial": device.serial,
        "label": device.label,
        "projects": [p.pk for p in projects if own is None or p.pk in own],
        "max_lease_seconds": device.max_lease_seconds,
        "lease_max_seconds": lease_max_seconds(device),
    }


@extend_schema(tags=["devices"])
class DeviceView(DeviceAPIView):
    """A device's projects, label and longest lease; site admins change them."""

    @extend_schema(
        summary="The device's projects and lease limit",
        responses={200: DeviceSettingsSerializer, **_errors(401, 404)},
    )
    def get(self, request: Request, serial: str) -> Response:
        return Response(DeviceSettingsSerializer(settings_data(self.device, request.user)).data)

    @extend_schema(
        summary="Grant the device to projects, name it, limit its leases (site admins)",
        request=DeviceUpdateSerializer,
        responses={200: DeviceSettingsSerializer, **_errors(400, 401, 403, 404)},
    )
    def patch(self, request: Request, serial: str) -> Response:
        check_site_admin(request.user)
        data = check_serializer(DeviceUpdateSerializer(data=request.data))
        changes: dict[str, Any] = {}
        if "projects" in data:
            projects = list(Project.objects.filter(pk__in=data["projects"]))
            missing = set(data["projects"]) - {p.pk for p in projects}
            if missing:
                raise InvalidRequest(f"projects: there is no project {min(missing)}")
            changes["projects"] = projects
        if "label" in data:
            changes["label"] = data["label"]
        if "max_lease_seconds" in data:
            changes["max_lease_seconds"] = data["max_lease_seconds"]
        device = do_update_device(serial, request.user, **changes)
        return Response(DeviceSettingsSerializer(settings_data(device, request.user)).data)


@extend_schema(tags=["devices"])
class LeaseView(DeviceAPIView):
    """Take (or renew) and release a device. A lease expires unless renewed."""

    @extend_schema(
        summary="Take or renew the device",
        request=LeaseRequestSerializer,
        responses={200: LeaseSerializer, **_errors(400, 401, 409, 503)},
    )
    def post(self, request: Request, serial: str) -> Response:
        data = check_serializer(LeaseRequestSerializer(data=request.data))
        _device, server = find_device(serial)
        lease = do_take_device(serial, server, request.user, data.get("seconds"))
        return Response(LeaseSerializer(lease).data)

    @extend_schema(
        summary="Release the device (force: an admin ends anyone's lease)",
        parameters=[
            OpenApiParameter(
                "force",
                OpenApiTypes.BOOL,
                description="End another user's lease: site admins and admins of one of the "
                "device's projects.",
            )
        ],
        responses={204: None, **_errors(401, 404, 409)},
    )
    def delete(self, request: Request, serial: str) -> Response:
        force = request.query_params.get("force") in ("1", "true", "yes")
        if not do_release_device(serial, request.user, force=force):
            return Response({"detail": f"Nobody holds device {serial}."}, status=404)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["devices"])
class StartRecordingView(DeviceAPIView):
    """Start recording a task on the device you hold (or resume an interrupted trajectory)."""

    @extend_schema(
        summary="Start or resume a trajectory on the device",
        request=StartRecordingSerializer,
        responses={201: TrajectorySerializer, **_errors(400, 401, 403, 404, 409, 503)},
    )
    def post(self, request: Request, serial: str) -> Response:
        data = check_serializer(StartRecordingSerializer(data=request.data))
        lease = check_driver(serial, request.user)
        if "resume" in data:
            if "reset_seed" in data:
                raise InvalidRequest(
                    "reset_seed: a resumed trajectory goes on from the device's current "
                    "screen; its apps cannot be reset."
                )
            trajectory = access_trajectory(request.user, data["resume"])
            access_project(request.user, trajectory.project_id, roles=RECORDING_ROLES)
            trajectory = do_resume_recording(lease, trajectory, request.user)
        else:
            task = task_to_record(request.user, data)
            trajectory = do_start_recording(
                lease, task, request.user, reset_seed=data.get("reset_seed")
            )
        trajectory = Trajectory.objects.select_related("task", "recorded_by").get(pk=trajectory.pk)
        return Response(
            TrajectorySerializer(trajectory, context={"request": request}).data, status=201
        )


def task_to_record(user, data: dict[str, Any]):
    """The task named by id, or a new one written in ``goal`` for ``project``."""
    if "task" in data:
        task = access_task(user, data["task"])
        access_project(user, task.project_id, roles=RECORDING_ROLES)
        return task
    if "project" in data and data.get("goal", "").strip():
        project = access_project(user, data["project"], roles=RECORDING_ROLES)
        record = TaskRecord(uid=f"written:{uuid.uuid4().hex[:12]}", goal=data["goal"].strip())
        with transaction.atomic():
            return get_or_create_task(project, record)
    raise InvalidRequest("task: give a task id, or a project and a goal")


@extend_schema(tags=["devices"])
class ActionView(DeviceAPIView):
    """Perform a canonical action on the device and record it as the next step."""

    @extend_schema(
        summary="Act on the device; returns the recorded step",
        request=ActionSerializer,
        responses={201: RecordedStepSerializer, **_errors(400, 401, 404, 409, 410, 503)},
    )
    def post(self, request: Request, serial: str) -> Response:
        trajectory = driven_trajectory(serial, request.user)
        step = record_step(trajectory, dict(request.data), request.user)
        return Response(RecordedStepSerializer(step, context={"request": request}).data, status=201)


@extend_schema(tags=["devices"])
class FinishRecordingView(DeviceAPIView):
    """End the recording with an answer and/or a terminate status; the answer is graded."""

    @extend_schema(
        summary="Finish the trajectory being recorded on the device",
        request=FinishRecordingSerializer,
        responses={200: TrajectorySerializer, **_errors(400, 401, 404, 409)},
    )
    def post(self, request: Request, serial: str) -> Response:
        data = check_serializer(FinishRecordingSerializer(data=request.data))
        trajectory = driven_trajectory(serial, request.user)
        do_finish_recording(
            trajectory, request.user, status=data["status"], answer=data.get("answer")
        )
        trajectory = Trajectory.objects.select_related("task", "recorded_by").get(pk=trajectory.pk)
        return Response(TrajectorySerializer(trajectory, context={"request": request}).data)


@extend_schema(tags=["devices"])
class FrameView(DeviceAPIView):
    """The device's screen now, as PNG; ``If-None-Match`` gets a 304 while it is unchanged."""

    @extend_schema(
        summary="The latest frame of the device's screen",
        responses={
            (200, "image/png"): OpenApiTypes.BINARY,
            304: OpenApiResponse(description="Unchanged since the ETag you sent."),
            **_errors(401, 503),
        },
    )
    def get(self, request: Request, serial: str) -> HttpResponse:
        return frame_response(request, serial)


def frame_response(request, serial: str) -> HttpResponse:
    frame = latest_frame(connect(serial))
    if request.headers.get("If-None-Match") == frame.etag:
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = HttpResponse(frame.png, content_type="image/png")
    response["ETag"] = frame.etag
    response["Cache-Control"] = "private, no-cache"
    return response

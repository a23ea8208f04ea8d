"""Devices in the REST API: list, lease, start/resume/finish a recording, act, watch.

A script or an agent records exactly like the console: take the device, start a trajectory,
post canonical actions (each answer is the recorded step), finish.
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

from trajectories.access import access_project, access_task, access_trajectory
from trajectories.api import WaypointAPIView, check_serializer
from trajectories.models import Role, Trajectory
from trajectories.records import TaskRecord
from trajectories.serializers import ActionSerializer, ErrorSerializer, TrajectorySerializer
from trajectories.services import get_or_create_task
from trajectories.validation import InvalidRequest

from .models import Lease
from .serializers import (
    AdbServerSerializer,
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
    """Recording errors answer 409, a vanished device 410, an unknown one 404, an unusable one
    503 (config/errors.py)."""


def leases_by_serial() -> dict[str, Lease]:
    return {
        lease.serial: lease
        for lease in Lease.objects.select_related("holder")
        if not lease.is_expired
    }


def device_reports() -> list[dict[str, Any]]:
    leases = leases_by_serial()
    reports = []
    for report in discover_devices():
        for info in report.devices:
            info.lease = leases.get(info.serial)
        reports.append(report)
    return reports


def driven_trajectory(serial: str, user) -> Trajectory:
    lease = check_driver(serial, user)
    if lease.trajectory_id is None:
        raise RecordingError(f"Nothing is being recorded on device {serial}; start a trajectory.")
    return access_trajectory(user, lease.trajectory_id)


@extend_schema(tags=["devices"])
class DeviceListView(DeviceAPIView):
    """Every device of every configured adb server, with its facts and who drives it."""

    @extend_schema(
        summary="Devices across the adb servers",
        responses={200: AdbServerSerializer(many=True), **_errors(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(AdbServerSerializer(device_reports(), many=True).data)


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
        summary="Release the device (force: a site admin ends anyone's lease)",
        parameters=[OpenApiParameter("force", OpenApiTypes.BOOL, description="Admins only.")],
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
            trajectory = access_trajectory(request.user, data["resume"])
            access_project(request.user, trajectory.project_id, roles=RECORDING_ROLES)
            trajectory = do_resume_recording(lease, trajectory, request.user)
        else:
            task = task_to_record(request.user, data)
            trajectory = do_start_recording(lease, task, request.user)
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

"""The REST API's import and export endpoints: each queues a job (see :mod:`formats.jobs`)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import parsers, status
from rest_framework.request import Request
from rest_framework.response import Response

from trajectories.access import access_project
from trajectories.api import WaypointAPIView, _errors, check_serializer, job_response
from trajectories.parsers import JSONParser
from trajectories.serializers import JobSerializer
from trajectories.validation import InvalidRequest

from .jobs import do_start_export, do_start_import
from .serializers import ExportRequestSerializer, ImportRequestSerializer


@extend_schema(tags=["jobs"])
class ImportView(WaypointAPIView):
    """Queue an import job for an uploaded archive."""

    parser_classes = [parsers.MultiPartParser, parsers.FormParser]

    @extend_schema(
        summary="Upload a .zip or .tar and queue its import",
        description="The job is run by a worker; poll the job's URL for its progress.",
        request={"multipart/form-data": ImportRequestSerializer},
        responses={202: JobSerializer, **_errors(400, 401, 404)},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        if "file" not in request.FILES:
            raise InvalidRequest("file: no file was uploaded (send it as multipart/form-data)")
        data = check_serializer(ImportRequestSerializer(data=request.data))
        job = do_start_import(
            project, data["file"], data["format"], request.user, as_copies=data["as_copies"]
        )
        return job_response(job, request, status.HTTP_202_ACCEPTED)


@extend_schema(tags=["jobs"])
class ExportView(WaypointAPIView):
    """Queue an export job for the project's trajectories."""

    parser_classes = [JSONParser]

    @extend_schema(
        summary="Queue an export of the project's trajectories",
        description="The job is run by a worker; when it has succeeded, fetch its download_url. "
        "In a project that hides gold answers (hide_gold), the formats that carry them "
        "(waypoint, androtmem, memory-world) are for its admins: others get a 403.",
        request=ExportRequestSerializer,
        responses={202: JobSerializer, **_errors(400, 401, 403, 404)},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        data = check_serializer(ExportRequestSerializer(data=request.data))
        job = do_start_export(
            project,
            data["format"],
            request.user,
            data["filters"],
            options=data["options"],
            split=data["split"],
        )
        return job_response(job, request, status.HTTP_202_ACCEPTED)

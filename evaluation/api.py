"""The evaluator in the REST API: score an uploaded predictions file against an export."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import parsers, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from trajectories.access import access_project
from trajectories.api import WaypointAPIView, _errors, check_serializer

from .service import do_evaluate


class EvaluationRequestSerializer(serializers.Serializer):
    export_job = serializers.IntegerField(
        required=False,
        help_text="The id of a succeeded androtmem export job of the project (the benchmark).",
    )
    benchmark = serializers.FileField(
        required=False,
        help_text="Instead of export_job: an androtmem export (.zip) or AndroTMem ground truth "
        "(.jsonl or .json).",
    )
    predictions = serializers.FileField(
        help_text="JSONL, one predicted step a line: AndroTMem's layout "
        '({"task_id", "step_index", "prediction": {"action": {...}}}) or GUI-Owl raw output '
        '({"task_id", "step_index", "output": "..."}).'
    )
    split = serializers.CharField(required=False, allow_blank=True, help_text="One split only.")


@extend_schema(tags=["evaluation"])
class EvaluationView(WaypointAPIView):
    """Score an agent's predictions against one of the project's benchmark exports."""

    parser_classes = [parsers.MultiPartParser, parsers.FormParser]

    @extend_schema(
        summary="Score predictions: AMS, TCR, M-Acc and task success, by intent, length and app",
        request={"multipart/form-data": EvaluationRequestSerializer},
        responses={200: OpenApiTypes.OBJECT, **_errors(400, 401, 404)},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        data = check_serializer(EvaluationRequestSerializer(data=request.data))
        return Response(
            do_evaluate(
                project,
                data.get("export_job"),
                data["predictions"],
                data.get("split"),
                benchmark=data.get("benchmark"),
            )
        )

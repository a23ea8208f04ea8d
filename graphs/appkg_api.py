"""The REST API of app knowledge graphs: list and build per project, export, import, and locate
a screen on a graph (UI-KOBE's runtime: the current node and its options)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from django.db.models import QuerySet
from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, parsers, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from trajectories.access import access_project
from trajectories.api import Pagination, WaypointAPIView, _errors, check_serializer
from trajectories.bounds import check_file_size, read_upload
from trajectories.parsers import JSONParser
from trajectories.serializers import ErrorSerializer, FiltersField, absolute
from trajectories.validation import InvalidData, InvalidRequest

from .access import access_app_graph
from .appkg_jobs import (
    app_graph_document,
    do_import_app_graph,
    do_start_app_graph,
    locate_on_app_graph,
)
from .models import AppGraph, GraphStatus


class AppGraphSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="Who created it; null when no user did, or that user was deleted.",
    )
    job_url = serializers.SerializerMethodField(help_text="The build job; null for an import.")
    export_url = serializers.SerializerMethodField(help_text="The graph as JSON; null until ready.")

    class Meta:
        model = AppGraph
        fields = [
            "id",
            "project",
            "app",
            "version",
            "params",
            "inputs",
            "status",
            "message",
            "node_count",
            "edge_count",
            "created_by",
            "created_at",
            "job_url",
            "export_url",
        ]

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_job_url(self, graph: AppGraph) -> str | None:
        if graph.job_id is None:
            return None
        return absolute(self.context, reverse("api-job", args=[graph.job_id]))

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_export_url(self, graph: AppGraph) -> str | None:
        if graph.status != GraphStatus.READY:
            return None
        return absolute(self.context, reverse("api-app-graph-export", args=[graph.pk]))


class AppGraphBuildSerializer(serializers.Serializer):
    app = serializers.CharField(max_length=255, help_text="The app's package name.")
    params = serializers.DictField(
        child=serializers.JSONField(allow_null=True),
        required=False,
        default=dict,
        help_text="structure_threshold and look_threshold (0 to 1), use_activity (boolean).",
    )
    filters = FiltersField(
        child=serializers.JSONField(allow_null=True),
        required=False,
        default=dict,
        help_text="Which trajectories, as for exports (status, tasks, apps, ...).",
    )


class AppGraphImportSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="An app graph exported as JSON.")


@extend_schema(tags=["graphs"])
class ProjectAppGraphListView(WaypointAPIView, generics.ListAPIView):
    """A project's app knowledge graphs (every version of every app); POST builds one."""

    serializer_class = AppGraphSerializer
    pagination_class = Pagination
    parser_classes = [JSONParser]

    def get_queryset(self) -> QuerySet[AppGraph]:
        project = access_project(self.request.user, self.kwargs["project_id"])
        return AppGraph.objects.filter(project=project).select_related("created_by")

    @extend_schema(
        summary="The project's app knowledge graphs, by app, newest version first",
        responses={200: AppGraphSerializer(many=True), **_errors(401, 404)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Queue a build of an app's knowledge graph (UI-KOBE)",
        description="A new version of the app's graph, built by a worker from the project's "
        "trajectories that show the app; poll job_url for progress.",
        request=AppGraphBuildSerializer,
        responses={
            202: AppGraphSerializer,
            **_errors(400, 401, 404),
            422: OpenApiResponse(
                ErrorSerializer,
                description="No trajectory shows the app, or a parameter is out of range.",
            ),
        },
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        data = check_serializer(AppGraphBuildSerializer(data=request.data))
        graph = do_start_app_graph(
            project, data["app"], request.user, data["params"], data["filters"]
        )
        body = AppGraphSerializer(graph, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED)


@extend_schema(tags=["graphs"])
class AppGraphImportView(WaypointAPIView):
    parser_classes = [parsers.MultiPartParser, parsers.FormParser]

    @extend_schema(
        summary="Import an exported app knowledge graph as a new version of its app's graph",
        request={"multipart/form-data": AppGraphImportSerializer},
        responses={
            201: AppGraphSerializer,
            **_errors(400, 401, 404),
            422: OpenApiResponse(
                ErrorSerializer, description="Not an app graph export; the message names the place."
            ),
        },
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        if "file" not in request.FILES:
            raise InvalidRequest("file: no file was uploaded (send it as multipart/form-data)")
        data = check_serializer(AppGraphImportSerializer(data=request.data))
        graph = do_import_app_graph(project, read_upload(data["file"], "file"), request.user)
        body = AppGraphSerializer(graph, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)


@extend_schema(tags=["graphs"])
class AppGraphExportView(WaypointAPIView):
    @extend_schema(
        summary="An app knowledge graph as JSON (nodes, edges, member screens, parameters)",
        responses={
            (200, "application/json"): OpenApiResponse(
                OpenApiTypes.OBJECT, description="The graph; importable again."
            ),
            **_errors(401, 404),
            422: OpenApiResponse(ErrorSerializer, description="The graph is not built yet."),
        },
    )
    def get(self, request: Request, graph_id: int) -> HttpResponse:
        graph = access_app_graph(request.user, graph_id)
        if graph.status != GraphStatus.READY:
            raise InvalidData(
                f"app graph {graph.pk} is {graph.status}: it can be exported when ready"
            )
        response = HttpResponse(app_graph_document(graph), content_type="application/json")
        name = f"app-graph-{graph.app}-v{graph.version}.json"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


# ------------------------------------------------------------------------------ locate

XML_HELP = "Its uiautomator dump, if there is one (placing by look alone is less sure)."
ACTIVITY_HELP = "The foreground activity, if known (the graph tells pages apart by it too)."


class LocateUploadSerializer(serializers.Serializer):
    screenshot = serializers.FileField(help_text="The current screen: PNG, JPEG or WebP.")
    xml = serializers.CharField(required=False, allow_blank=True, help_text=XML_HELP)
    activity = serializers.CharField(
        required=False, allow_blank=True, max_length=255, help_text=ACTIVITY_HELP
    )


class LocateJSONSerializer(serializers.Serializer):
    screenshot = serializers.CharField(help_text="The current screen's image bytes, base64.")
    xml = serializers.CharField(required=False, allow_blank=True, help_text=XML_HELP)
    activity = serializers.CharField(
        required=False, allow_blank=True, max_length=255, help_text=ACTIVITY_HELP
    )


class LocatedNodeSerializer(serializers.Serializer):
    id = serializers.CharField()
    description = serializers.CharField(help_text="What the page is, from what its screens share.")
    activity = serializers.CharField(allow_blank=True)
    labels = serializers.ListField(child=serializers.CharField())
    varies = serializers.ListField(
        child=serializers.CharField(), help_text="Fields whose values differ between visits."
    )
    reference = serializers.CharField(help_text="sha256 of the node's reference screenshot.")
    members = serializers.IntegerField(help_text="Screens merged into the node.")


class CandidateSerializer(serializers.Serializer):
    node = serializers.CharField()
    description = serializers.CharField()
    structure = serializers.FloatField(help_text="Share of structure (0 to 1).")
    look = serializers.FloatField(help_text="Correlation of the looks (-1 to 1).")


class OptionSerializer(serializers.Serializer):
    edge = serializers.CharField()
    instruction = serializers.CharField(allow_blank=True)
    action_type = serializers.CharField()
    action = serializers.DictField(help_text="The recorded action (canonical schema).")
    element = serializers.DictField(help_text="The element it hit; {} when none.")
    effect = serializers.CharField(allow_blank=True, help_text="What the action does.")
    seen = serializers.IntegerField(help_text="How many times it was taken.")


class SelfLoopOptionSerializer(OptionSerializer):
    fields = serializers.ListField(
        child=serializers.CharField(), help_text="The fields it changes, as element.field."
    )


class TargetNodeSerializer(serializers.Serializer):
    id = serializers.CharField()
    kind = serializers.ChoiceField(choices=["state", "external"])
    description = serializers.CharField()


class TransitionOptionSerializer(OptionSerializer):
    target = TargetNodeSerializer()


class FixedOptionSerializer(serializers.Serializer):
    instruction = serializers.CharField()
    actions = serializers.ListField(child=serializers.CharField())


class NodeOptionsSerializer(serializers.Serializer):
    self_loops = SelfLoopOptionSerializer(many=True)
    transitions = TransitionOptionSerializer(many=True)
    task_completion = FixedOptionSerializer()
    free_action = FixedOptionSerializer()


class LocationSerializer(serializers.Serializer):
    graph = serializers.IntegerField()
    app = serializers.CharField()
    version = serializers.IntegerField()
    located = serializers.BooleanField()
    node = LocatedNodeSerializer(allow_null=True, help_text="null: no node takes the screen.")
    structure = serializers.FloatField()
    look = serializers.FloatField()
    reason = serializers.CharField(allow_blank=True, help_text="Why no node took the screen.")
    candidates = CandidateSerializer(many=True, help_text="The nearest nodes, nearest first.")
    options = NodeOptionsSerializer()


def _screenshot_of_json(text: str) -> bytes:
    """Base64 image bytes, their size checked before they are decoded."""
    check_file_size(len(text) * 3 // 4, "screenshot")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidData("screenshot: not base64 image bytes") from None


@extend_schema(tags=["graphs"])
class AppGraphLocateView(WaypointAPIView):
    parser_classes = [parsers.MultiPartParser, parsers.FormParser, JSONParser]

    @extend_schema(
        summary="Locate a screen on an app graph: its node and the node's options (UI-KOBE)",
        description="Send the current screenshot (and its XML) as multipart/form-data, or as "
        "JSON with the image in base64. The answer names the node the screen is on (or null, "
        "with the nearest nodes), and the options there: self-loop actions with the fields "
        "they change, transitions to neighbouring nodes with their instruction, effect and "
        "target, task completion, and a free action.",
        request={
            "multipart/form-data": LocateUploadSerializer,
            "application/json": LocateJSONSerializer,
        },
        responses={
            200: LocationSerializer,
            **_errors(400, 401, 404),
            422: OpenApiResponse(
                ErrorSerializer,
                description="Not an image, an image or XML too large, XML that is no UI dump, "
                "or a graph not ready (or exported by a version that kept no exemplars).",
            ),
        },
    )
    def post(self, request: Request, graph_id: int) -> Response:
        graph = access_app_graph(request.user, graph_id)
        if request.content_type.startswith("application/json"):
            data = check_serializer(LocateJSONSerializer(data=request.data))
            image = _screenshot_of_json(data["screenshot"])
        else:
            if "screenshot" not in request.FILES:
                raise InvalidRequest(
                    "screenshot: no file was uploaded (send it as multipart/form-data, "
                    "or as base64 in JSON)"
                )
            data = check_serializer(LocateUploadSerializer(data=request.data))
            image = read_upload(data["screenshot"], "screenshot")
        xml = data.get("xml") or ""
        if xml:
            check_file_size(len(xml), "xml")
        result = locate_on_app_graph(graph, image, xml or None, data.get("activity") or "")
        return Response(result)

"""The memory graph API: build (a job), list, show, export, import, retrieve."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import orjson
from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, parsers, renderers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from trajectories.access import access_project
from trajectories.api import Pagination, WaypointAPIView, _errors, check_serializer
from trajectories.bounds import load_json, read_upload
from trajectories.parsers import JSONParser
from trajectories.serializers import ErrorSerializer
from trajectories.validation import InvalidData, InvalidRequest

from .access import access_graph_to_query, access_memory_graph
from .models import MemoryGraph
from .serializers import (
    GraphBuildRequestSerializer,
    MemoryGraphSerializer,
    RetrievalSerializer,
    RetrieveJSONSerializer,
    RetrieveUploadSerializer,
)
from .services import (
    do_build_memory_graph,
    do_import_memory_graph,
    export_memory_graph,
    retrieve_for_screen,
)

PASSTHROUGH = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
LINE_SEPARATORS = [("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029")]


class FastJSONRenderer(renderers.JSONRenderer):
    """DRF's compact JSON, written by orjson (a retrieval's answer lists every subgoal of its
    nodes: json took 4 ms of it). Anything orjson does not write as json would (an indent
    asked for, a type it does not know) is DRF's own rendering."""

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> bytes:
        indent = self.get_indent(accepted_media_type, renderer_context or {})
        if data is None or indent is not None or self.ensure_ascii or not self.compact:
            return super().render(data, accepted_media_type, renderer_context)
        try:
            # Dates and dataclasses are written by DRF's encoder, its way.
            content = orjson.dumps(data, option=PASSTHROUGH)
        except TypeError:
            return super().render(data, accepted_media_type, renderer_context)
        # As DRF does: the two line separators JSON allows raw and JavaScript does not.
        for raw, escaped in LINE_SEPARATORS:
            if raw in content:  # looked for first: a copy of a large answer costs
                content = content.replace(raw, escaped)
        return content


RENDERERS = [
    FastJSONRenderer if renderer is renderers.JSONRenderer else renderer
    for renderer in api_settings.DEFAULT_RENDERER_CLASSES
]


def graph_response(graph: MemoryGraph, request: Request, code: int = 200) -> Response:
    return Response(MemoryGraphSerializer(graph, context={"request": request}).data, status=code)


@extend_schema(tags=["graphs"])
class ProjectGraphListView(WaypointAPIView, generics.ListAPIView):
    """A project's memory graphs, newest version first; POST builds a new one."""

    serializer_class = MemoryGraphSerializer
    pagination_class = Pagination
    parser_classes = [JSONParser]

    def get_queryset(self) -> QuerySet[MemoryGraph]:
        project = access_project(self.request.user, self.kwargs["project_id"])
        return MemoryGraph.objects.filter(project=project).select_related(
            "job", "created_by", "parent"
        )

    @extend_schema(
        summary="The project's memory graphs, newest version first",
        responses={200: MemoryGraphSerializer(many=True), **_errors(401, 404)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Build a memory graph (or extend one) as a background job",
        description="The graph is built by a worker; poll its URL (or its job's) for progress.",
        request=GraphBuildRequestSerializer,
        responses={202: MemoryGraphSerializer, **_errors(400, 401, 404)},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        data = check_serializer(GraphBuildRequestSerializer(data=request.data))
        extend = None
        if data.get("extend"):
            extend = access_memory_graph(request.user, data["extend"])
        graph = do_build_memory_graph(
            project,
            request.user,
            dict(data["params"]),
            data["filters"],
            approved_only=data["approved_only"],
            extend=extend,
        )
        return graph_response(graph, request, status.HTTP_202_ACCEPTED)


@extend_schema(tags=["graphs"])
class GraphDetailView(WaypointAPIView):
    @extend_schema(
        summary="A memory graph: its version, parameters, inputs, status and size",
        responses={200: MemoryGraphSerializer, **_errors(401, 404)},
    )
    def get(self, request: Request, graph_id: int) -> Response:
        return graph_response(access_memory_graph(request.user, graph_id), request)


@extend_schema(tags=["graphs"])
class GraphExportView(WaypointAPIView):
    @extend_schema(
        summary="A memory graph as JSON: nodes, edges, member screens, parameters, embedder",
        description="No database ids: screens are named by screenshot sha256 and trajectory uid "
        "with step index. Importing it gives the same graph.",
        responses={
            200: OpenApiTypes.OBJECT,
            **_errors(401, 404),
            422: OpenApiResponse(ErrorSerializer, description="The graph is not built yet."),
        },
    )
    def get(self, request: Request, graph_id: int) -> Response:
        return Response(export_memory_graph(access_memory_graph(request.user, graph_id)))


@extend_schema(tags=["graphs"])
class GraphImportView(WaypointAPIView):
    parser_classes = [JSONParser, parsers.MultiPartParser]

    @extend_schema(
        summary="Import a memory graph export as the project's next graph version",
        description="The body is the export's JSON, or a multipart upload of it as `file`.",
        request={"application/json": OpenApiTypes.OBJECT},
        responses={201: MemoryGraphSerializer, **_errors(400, 401, 404)},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        if "file" in request.FILES:
            raw = read_upload(request.FILES["file"], "file")
            try:
                doc = load_json(raw, "file")
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise InvalidRequest("file: not a JSON document") from None
        else:
            doc = request.data
        graph = do_import_memory_graph(project, request.user, doc)
        return graph_response(graph, request, status.HTTP_201_CREATED)


@extend_schema(tags=["graphs"])
class GraphRetrieveView(WaypointAPIView):
    parser_classes = [parsers.MultiPartParser, parsers.FormParser, JSONParser]
    renderer_classes = RENDERERS

    @extend_schema(
        summary="The top-k nodes for a screenshot, their subgoals and the memory block",
        description="Send the current screenshot (and its XML) as multipart/form-data, or as "
        "JSON with the image in base64. Meant for agents during evaluation runs.",
        request={
            "multipart/form-data": RetrieveUploadSerializer,
            "application/json": RetrieveJSONSerializer,
        },
        responses={200: RetrievalSerializer, **_errors(400, 401, 404)},
    )
    def post(self, request: Request, graph_id: int) -> Response:
        graph = access_graph_to_query(request.user, graph_id)
        if request.content_type.startswith("application/json"):
            data = check_serializer(RetrieveJSONSerializer(data=request.data))
            try:
                image = base64.b64decode(data["screenshot"], validate=True)
            except (binascii.Error, ValueError):
                raise InvalidData("screenshot: not base64 image bytes") from None
        else:
            if "screenshot" not in request.FILES:
                raise InvalidRequest("screenshot: no file was uploaded")
            data = check_serializer(RetrieveUploadSerializer(data=request.data))
            image = read_upload(data["screenshot"], "screenshot")
        result = retrieve_for_screen(
            graph, image, data.get("xml") or None, data.get("k"), task=data.get("task", "")
        )
        return Response(result)

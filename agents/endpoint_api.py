"""Model endpoints in the REST API: the site's (site admins register and remove them) and a
project's (its members list them; its admins register them where the site allows it). No answer
ever holds a key: only whether an endpoint has one."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import parsers, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from trajectories.access import AccessDenied, access_project
from trajectories.api import WaypointAPIView, _errors, check_serializer

from .endpoints import (
    access_endpoint,
    do_register_endpoint,
    do_remove_endpoint,
    endpoint_row,
    endpoints_for,
    is_site_admin,
)
from .models import ModelEndpoint


class EndpointRequestSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="What agent specs name: openai:REGIME,endpoint=NAME.")
    url = serializers.CharField(help_text="The API's base URL, e.g. https://models.example/v1.")
    model = serializers.CharField()
    api_key = serializers.CharField(
        required=False,
        allow_blank=True,
        write_only=True,
        help_text="Sent to this URL only, as a bearer key; never shown again.",
    )


class EndpointSerializer(serializers.Serializer):
    name = serializers.CharField()
    scope = serializers.ChoiceField(choices=["site", "project"])
    url = serializers.CharField()
    model = serializers.CharField()
    has_key = serializers.BooleanField()
    created_at = serializers.DateTimeField()


def _register(request: Request, project) -> Response:
    data = check_serializer(EndpointRequestSerializer(data=request.data))
    endpoint = do_register_endpoint(request.user, project=project, **data)
    return Response(endpoint_row(endpoint), status=status.HTTP_201_CREATED)


@extend_schema(tags=["agents"])
class SiteEndpointListView(WaypointAPIView):
    parser_classes = [parsers.JSONParser]

    @extend_schema(
        summary="The site's model endpoints (site admins: every project's too)",
        responses={200: EndpointSerializer(many=True), **_errors(401)},
    )
    def get(self, request: Request) -> Response:
        rows = ModelEndpoint.objects.all() if is_site_admin(request.user) else endpoints_for(None)
        return Response([endpoint_row(e) for e in rows.select_related("project")])

    @extend_schema(
        summary="Register a site model endpoint (site admins)",
        request=EndpointRequestSerializer,
        responses={201: EndpointSerializer, **_errors(400, 401, 403, 422)},
    )
    def post(self, request: Request) -> Response:
        if not is_site_admin(request.user):
            raise AccessDenied("Only site admins register the site's model endpoints")
        return _register(request, None)


@extend_schema(tags=["agents"])
class SiteEndpointView(WaypointAPIView):
    @extend_schema(
        summary="Remove a site model endpoint (site admins)",
        responses={204: None, **_errors(401, 403, 422)},
    )
    def delete(self, request: Request, name: str) -> Response:
        if not is_site_admin(request.user):
            raise AccessDenied("Only site admins remove the site's model endpoints")
        do_remove_endpoint(request.user, access_endpoint(None, name))
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["agents"])
class ProjectEndpointListView(WaypointAPIView):
    parser_classes = [parsers.JSONParser]

    @extend_schema(
        summary="The model endpoints the project's agent specs may name: its own and the site's",
        responses={200: EndpointSerializer(many=True), **_errors(401, 404)},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        return Response([endpoint_row(e) for e in endpoints_for(project)])

    @extend_schema(
        summary="Register a model endpoint for the project (its admins, where the site allows "
        "it: WAYPOINT_PROJECT_ENDPOINTS; site admins always)",
        request=EndpointRequestSerializer,
        responses={201: EndpointSerializer, **_errors(400, 401, 403, 404, 422)},
    )
    def post(self, request: Request, project_id: int) -> Response:
        return _register(request, access_project(request.user, project_id))


@extend_schema(tags=["agents"])
class ProjectEndpointView(WaypointAPIView):
    @extend_schema(
        summary="Remove one of the project's model endpoints",
        responses={204: None, **_errors(401, 403, 404, 422)},
    )
    def delete(self, request: Request, project_id: int, name: str) -> Response:
        project = access_project(request.user, project_id)
        do_remove_endpoint(request.user, access_endpoint(project, name))
        return Response(status=status.HTTP_204_NO_CONTENT)

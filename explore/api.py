"""Explorations in the REST API: start one, follow it, stop and resume it."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from trajectories.access import access_project
from trajectories.api import WaypointAPIView, _errors, check_serializer
from trajectories.models import Role
from trajectories.parsers import JSONParser
from trajectories.views import JOB_ROLES

from .access import access_exploration, check_allow
from .elements import DEFAULT_DENY
from .models import DenyList, Exploration, Strategy
from .services import (
    do_resume_exploration,
    do_set_deny_list,
    do_start_exploration,
    do_stop_exploration,
)


class StartSerializer(serializers.Serializer):
    app = serializers.CharField(help_text="The app's package.")
    device = serializers.CharField(help_text="The device's serial.")
    budget = serializers.CharField(help_text="Steps (200) or minutes (30min).")
    strategy = serializers.ChoiceField(choices=Strategy.values, default=Strategy.DFS)
    seed = serializers.IntegerField(default=0, min_value=0)
    allow = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        default=list,
        help_text="Deny-list entries to allow: project admins only (403 for anyone else).",
    )


class ExplorationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    app = serializers.CharField()
    device = serializers.CharField()
    strategy = serializers.CharField()
    seed = serializers.IntegerField()
    budget = serializers.CharField()
    status = serializers.CharField()
    message = serializers.CharField()
    steps = serializers.IntegerField()
    states = serializers.IntegerField()
    transitions = serializers.IntegerField()
    frontier_size = serializers.IntegerField()
    job = serializers.IntegerField(allow_null=True)
    graph = serializers.IntegerField(allow_null=True)


def exploration_dict(x: Exploration) -> dict[str, Any]:
    return {
        "id": x.pk,
        "app": x.app,
        "device": x.serial,
        "strategy": x.strategy,
        "seed": x.seed,
        "budget": x.budget_text,
        "status": x.status,
        "message": x.message,
        "steps": x.steps,
        "states": x.states,
        "transitions": x.transitions,
        "frontier_size": x.frontier_size,
        "job": x.job_id,
        "graph": x.graph_id,
    }


@extend_schema(tags=["explore"])
class ProjectExplorationListView(WaypointAPIView):
    parser_classes = [JSONParser]

    @extend_schema(
        summary="The project's explorations, newest first",
        responses={200: ExplorationSerializer(many=True), **_errors(401, 404)},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        rows = Exploration.objects.filter(project=project)[:50]
        return Response([exploration_dict(x) for x in rows])

    @extend_schema(
        summary="Explore an app on a device of the project (a Celery job walks it)",
        request=StartSerializer,
        responses={202: ExplorationSerializer, **_errors(400, 401, 403, 404)},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id, roles=JOB_ROLES)
        data = check_serializer(StartSerializer(data=request.data))
        check_allow(request.user, project, data["allow"])
        x = do_start_exploration(
            project,
            request.user,
            app=data["app"],
            serial=data["device"],
            budget=data["budget"],
            strategy=data["strategy"],
            seed=data["seed"],
            allow=data["allow"],
        )
        return Response(exploration_dict(x), status=status.HTTP_202_ACCEPTED)


@extend_schema(tags=["explore"])
class ExplorationDetailView(WaypointAPIView):
    @extend_schema(
        summary="An exploration and its progress (steps, states, transitions, frontier size)",
        responses={200: ExplorationSerializer, **_errors(401, 404)},
    )
    def get(self, request: Request, exploration_id: int) -> Response:
        return Response(exploration_dict(access_exploration(request.user, exploration_id)))


@extend_schema(tags=["explore"])
class ExplorationStopView(WaypointAPIView):
    @extend_schema(
        summary="Stop an exploration (it resumes from its last whole episode)",
        request=None,
        responses={200: ExplorationSerializer, **_errors(401, 403, 404, 422)},
    )
    def post(self, request: Request, exploration_id: int) -> Response:
        x = access_exploration(request.user, exploration_id)
        access_project(request.user, x.project_id, roles=JOB_ROLES)
        return Response(exploration_dict(do_stop_exploration(x, request.user)))


@extend_schema(tags=["explore"])
class ExplorationResumeView(WaypointAPIView):
    @extend_schema(
        summary="Resume a stopped exploration from its saved frontier",
        request=None,
        responses={202: ExplorationSerializer, **_errors(401, 403, 404, 422)},
    )
    def post(self, request: Request, exploration_id: int) -> Response:
        x = access_exploration(request.user, exploration_id)
        access_project(request.user, x.project_id, roles=JOB_ROLES)
        resumed = do_resume_exploration(x, request.user)
        return Response(exploration_dict(resumed), status=status.HTTP_202_ACCEPTED)


class DenyListSerializer(serializers.Serializer):
    app = serializers.CharField(read_only=True)
    entries = serializers.ListField(
        child=serializers.CharField(), help_text="Texts, or id:RESOURCE_ID, refused unless allowed."
    )
    default = serializers.ListField(child=serializers.CharField(), read_only=True)


def deny_dict(app: str, entries: list[str]) -> dict[str, Any]:
    return {"app": app, "entries": entries, "default": list(DEFAULT_DENY)}


@extend_schema(tags=["explore"])
class DenyListView(WaypointAPIView):
    parser_classes = [JSONParser]

    @extend_schema(
        summary="The app's deny-list (on top of the default one)",
        responses={200: DenyListSerializer, **_errors(401, 404)},
    )
    def get(self, request: Request, project_id: int, app: str) -> Response:
        project = access_project(request.user, project_id)
        deny = DenyList.objects.filter(project=project, app=app).first()
        return Response(deny_dict(app, deny.entries if deny else []))

    @extend_schema(
        summary="Set the app's deny-list: elements an exploration refuses to act on",
        request=DenyListSerializer,
        responses={200: DenyListSerializer, **_errors(400, 401, 403, 404)},
    )
    def put(self, request: Request, project_id: int, app: str) -> Response:
        project = access_project(request.user, project_id, roles=(Role.ADMIN,))
        data = check_serializer(DenyListSerializer(data=request.data))
        deny = do_set_deny_list(project, app, data["entries"])
        return Response(deny_dict(deny.app, deny.entries))

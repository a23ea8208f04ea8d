"""Agent runs and suites in the REST API: start a run, list runs with their scores, a run with
its episodes, the task x run matrix, two runs compared; import and export suites."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from trajectories.access import access_project
from trajectories.api import WaypointAPIView, _errors, check_serializer
from trajectories.gold import can_see_gold, check_can_see_gold, instances_data
from trajectories.parsers import JSONParser
from trajectories.views import JOB_ROLES

from .access import access_run, access_suite
from .calibration import calibration, suite_summary
from .models import Run, Suite
from .results import (
    compare,
    episode_rows,
    matrix,
    picked_runs,
    runs_of,
    summaries,
    summarize,
    two_runs,
)
from .services import (
    MAX_ATTEMPTS,
    MAX_STEPS,
    do_calibrate_suite,
    do_import_suite,
    do_start_run,
    suite_named,
)
from .views import MATRIX_RUNS, RUNS_SHOWN

SUITE_EXPORT = "export a suite (it carries the gold answers' digests)"
RUNS = OpenApiParameter(
    "runs", int, many=True, description="Run ids, repeated: ?runs=3&runs=5 (in that order)."
)


class RunRequestSerializer(serializers.Serializer):
    agent = serializers.CharField(
        help_text="solver, window[,k=K], window+memory[,k=K], random[,seed=N], replay[,run=N], "
        "or openai:REGIME[,endpoint=NAME]"
        "[,model=..][,graph=V][,xml=1][,k=K] with REGIME mobile_use, androtmem-v1, -v2 or -v3 "
        "(NAME: a registered model endpoint, /api/v1/projects/<id>/endpoints/)."
    )
    suite = serializers.CharField(
        required=False, help_text="A suite of the project: NAME (newest version) or NAME@VERSION."
    )
    tasks = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Instead of a suite: template ids, or memory, short, all, app:SLUG.",
    )
    seeds = serializers.JSONField(
        required=False,
        help_text='"1..5", "1,4,9" or [1, 4, 9]: every template at every seed, or only the '
        "suite's instances at these seeds.",
    )
    levels = serializers.JSONField(
        required=False,
        help_text='STAMP\'s difficulty levels, "1,2,3" or [1, 2, 3] (1: simplified with the '
        "task-required knowledge, 2: the task with the knowledge, 3: the task alone): every "
        "template at every level (default 3), or only the suite's instances at these levels.",
    )
    attempts = serializers.IntegerField(
        required=False, default=1, min_value=1, max_value=MAX_ATTEMPTS
    )
    max_steps = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_STEPS,
        help_text="The step cap of every episode (default: each instance's own budget, "
        "WAYPOINT_AGENT_MAX_STEPS for a template without one).",
    )
    devices = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Serials of the project's devices (default: every connected one).",
    )


class RunSummarySerializer(serializers.Serializer):
    """A run's scores (documentation of :class:`agents.results.Summary`)."""

    run = serializers.IntegerField()
    status = serializers.CharField(help_text="The run's job: queued, running, succeeded, failed.")
    agent = serializers.CharField(help_text="Agent, regime and model, as shown beside others.")
    agent_spec = serializers.CharField()
    regime = serializers.CharField()
    model = serializers.CharField()
    suite = serializers.CharField()
    created_at = serializers.DateTimeField()
    episodes = serializers.IntegerField()
    finished = serializers.IntegerField()
    succeeded = serializers.IntegerField()
    success_rate = serializers.FloatField(allow_null=True)
    m_acc = serializers.FloatField(allow_null=True, help_text="STAMP's M-Acc over the episodes.")
    memory_episodes = serializers.IntegerField()
    pass_at_k = serializers.DictField(help_text="pass@k over seeds (evaluation.metrics).")
    mean_steps = serializers.FloatField(allow_null=True)
    tokens_in = serializers.IntegerField()
    tokens_out = serializers.IntegerField()
    mean_seconds = serializers.FloatField(allow_null=True)
    failures = serializers.DictField(child=serializers.IntegerField())
    by_level = serializers.ListField(
        child=serializers.DictField(),
        help_text="The scores level by level (STAMP's L1, L2, L3): level, episodes, finished, "
        "succeeded, success_rate, m_acc, mean_steps.",
    )


class EpisodeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    run_id = serializers.IntegerField()
    template = serializers.CharField()
    seed = serializers.IntegerField()
    level = serializers.IntegerField(help_text="STAMP's difficulty level: 1, 2 or 3.")
    attempt = serializers.IntegerField()
    status = serializers.CharField()
    success = serializers.BooleanField(allow_null=True)
    failure_kind = serializers.CharField()
    answer = serializers.CharField()
    steps = serializers.IntegerField()
    invalid_outputs = serializers.IntegerField()
    tokens_in = serializers.IntegerField()
    tokens_out = serializers.IntegerField()
    model_ms = serializers.IntegerField()
    duration_ms = serializers.IntegerField()
    memory_score = serializers.FloatField(allow_null=True)
    device_serial = serializers.CharField()
    trajectory_id = serializers.IntegerField(allow_null=True)
    message = serializers.CharField()


class RunDetailSerializer(RunSummarySerializer):
    job = serializers.IntegerField()
    max_steps = serializers.IntegerField(
        allow_null=True, help_text="The run's step cap; null: each instance's own budget."
    )
    options = serializers.DictField()
    instances = serializers.ListField(child=serializers.DictField())
    devices = serializers.ListField(child=serializers.DictField())
    episodes = EpisodeSerializer(many=True)


class SuiteSerializer(serializers.Serializer):
    name = serializers.CharField()
    version = serializers.CharField()
    instances = serializers.IntegerField()
    levels = serializers.ListField(child=serializers.IntegerField())
    memory = serializers.DictField(
        allow_null=True,
        help_text="What make_suite --check-memory measured: k, instances, need_memory, "
        "solver_steps, left_out (null: not checked).",
    )
    calibration = serializers.DictField(
        help_text="The control agents' latest scores on the suite: k, instances, need_memory, "
        "controls [{agent, spec, run, status, finished, solved, memory_solved, expected}]."
    )
    created_at = serializers.DateTimeField()


def run_detail(run: Run, user) -> dict[str, Any]:
    """A run as ``user`` sees it: in a project that hides its gold, its instances name no gold
    digest unless the user may see the gold (a digest of a short answer is undone by trying)."""
    rows = episode_rows([run])[run.pk]
    return {
        **summarize(run, rows),
        "job": run.job_id,
        "max_steps": run.max_steps,
        "options": run.options,
        "instances": instances_data(run.instances, can_see_gold(user, run.project)),
        "devices": run.devices,
        "episodes": rows,
    }


@extend_schema(tags=["agents"])
class ProjectRunListView(WaypointAPIView):
    parser_classes = [JSONParser]

    @extend_schema(
        summary="The project's agent runs, newest first, with their scores",
        responses={200: RunSummarySerializer(many=True), **_errors(401, 404)},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        return Response(summaries(list(runs_of(project)[:RUNS_SHOWN])))

    @extend_schema(
        summary="Run an agent over a suite (or task templates at seeds) on the project's devices",
        description="One Celery task per episode; poll the run (or its job) for progress.",
        request=RunRequestSerializer,
        responses={202: RunDetailSerializer, **_errors(400, 401, 403, 404)},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id, roles=JOB_ROLES)
        data = check_serializer(RunRequestSerializer(data=request.data))
        run = do_start_run(
            project,
            request.user,
            agent=data["agent"],
            suite=suite_named(project, data["suite"]) if data.get("suite") else None,
            tasks=data.get("tasks"),
            seeds=data.get("seeds"),
            levels=data.get("levels"),
            attempts=data["attempts"],
            max_steps=data.get("max_steps"),
            devices=data.get("devices"),
        )
        return Response(run_detail(run, request.user), status=status.HTTP_202_ACCEPTED)


@extend_schema(tags=["agents"])
class RunDetailView(WaypointAPIView):
    @extend_schema(
        summary="A run: its agent, scores (success, M-Acc, pass@k, steps, tokens, time, "
        "failure kinds) and every episode, each naming its trajectory",
        responses={200: RunDetailSerializer, **_errors(401, 404)},
    )
    def get(self, request: Request, run_id: int) -> Response:
        return Response(run_detail(access_run(request.user, run_id), request.user))


@extend_schema(tags=["agents"])
class RunMatrixView(WaypointAPIView):
    @extend_schema(
        summary="The task x run matrix of some of the project's runs",
        parameters=[RUNS],
        responses={200: OpenApiTypes.OBJECT, **_errors(400, 401, 404)},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        return Response(matrix(picked_runs(project, request.GET.getlist("runs"), MATRIX_RUNS)))


@extend_schema(tags=["agents"])
class RunCompareView(WaypointAPIView):
    @extend_schema(
        summary="Two runs compared: the episodes that flipped from the first to the second",
        parameters=[RUNS],
        responses={200: OpenApiTypes.OBJECT, **_errors(400, 401, 404)},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        return Response(compare(*two_runs(project, request.GET.getlist("runs"))))


def suite_row(suite: Suite) -> dict[str, Any]:
    return {**suite_summary(suite), "calibration": calibration(suite)}


@extend_schema(tags=["agents"])
class ProjectSuiteListView(WaypointAPIView):
    parser_classes = [JSONParser]

    @extend_schema(
        summary="The project's suites",
        responses={200: SuiteSerializer(many=True), **_errors(401, 404)},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id)
        return Response([suite_row(s) for s in Suite.objects.filter(project=project)])

    @extend_schema(
        summary="Import a suite document (as exported); the same document again is the same suite",
        request={"application/json": OpenApiTypes.OBJECT},
        responses={
            201: SuiteSerializer,
            200: SuiteSerializer,
            **_errors(400, 401, 403, 404),
        },
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id, roles=JOB_ROLES)
        suite, created = do_import_suite(project, request.user, request.data)
        return Response(
            suite_row(suite), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


@extend_schema(tags=["agents"])
class SuiteCalibrateView(WaypointAPIView):
    @extend_schema(
        summary="Calibrate a suite: queue a run of each control agent (solver, window+memory, "
        "window, random) over it; its row then shows their scores",
        request=None,
        responses={202: OpenApiTypes.OBJECT, **_errors(401, 403, 404, 422)},
    )
    def post(self, request: Request, project_id: int, name: str, version: str) -> Response:
        project = access_project(request.user, project_id, roles=JOB_ROLES)
        suite = access_suite(request.user, project.pk, name, version)
        runs = do_calibrate_suite(project, request.user, suite)
        return Response(
            {"runs": [{"run": run.pk, "agent": run.agent_spec} for run in runs]},
            status=status.HTTP_202_ACCEPTED,
        )


@extend_schema(tags=["agents"])
class SuiteExportView(WaypointAPIView):
    @extend_schema(
        summary="A suite's document, to import elsewhere and run the same benchmark (in a "
        "project that hides its gold: its admins only)",
        operation_id="projects_suites_export",
        responses={200: OpenApiTypes.OBJECT, **_errors(401, 403, 404)},
    )
    def get(self, request: Request, project_id: int, name: str, version: str) -> Response:
        suite = access_suite(request.user, project_id, name, version)
        check_can_see_gold(request.user, suite.project, SUITE_EXPORT)
        return Response(suite.document)

"""The public REST API, v1: projects, tasks, trajectories, steps, and import/export jobs.

Views are thin: fetch through an ``access_*`` helper (outsiders get 404), call a ``do_*``
service for any write, serialize. Domain errors keep the project's one shape,
``{"detail": message}``, mapped in one place (``config/errors.py``): a malformed request
(:class:`InvalidRequest`) is a 400, a rule of the domain broken (:class:`InvalidData`) a 422,
:class:`AccessDenied` a 403.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.files.storage import default_storage
from django.db.models import Count, IntegerField, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import FileResponse, Http404, HttpResponse
from django.utils.datastructures import MultiValueDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, generics, serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from core.login_throttle import locked_out_json

from . import list_cache
from .access import (
    access_blob,
    access_job,
    access_membership,
    access_project,
    access_task,
    access_trajectory,
    projects_of,
)
from .accounts import user_named
from .gold import GoldRule, check_job_file
from .jobs import (
    do_retry_job,
    download_name,
    with_true_status,
)
from .models import (
    AnchorLink,
    Blob,
    Job,
    JobKind,
    JobStatus,
    Membership,
    Outcome,
    Project,
    Role,
    Source,
    Status,
    Step,
    Task,
    Trajectory,
)
from .parsers import BoundedParsers
from .selectors import (
    PROJECT_SORTS,
    TRAJECTORY_SORTS,
    list_rows,
    search_projects,
    trajectory_list,
)
from .serializers import (
    ErrorSerializer,
    JobSerializer,
    MemberCreateSerializer,
    MemberRoleSerializer,
    MemberSerializer,
    ProjectCreateSerializer,
    ProjectSerializer,
    ProjectUpdateSerializer,
    StepSerializer,
    TaskSerializer,
    TokenRequestSerializer,
    TokenSerializer,
    TrajectoryDetailSerializer,
    TrajectorySerializer,
)
from .services import (
    do_add_membership,
    do_create_project,
    do_remove_membership,
    do_set_membership,
    do_update_project,
)
from .validation import KIND_NAMES, MAX_INT, InvalidRequest
from .views import blob_response


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "Conflict."
    default_code = "conflict"


class Gone(exceptions.APIException):
    status_code = status.HTTP_410_GONE
    default_detail = "Gone."
    default_code = "gone"


def _errors(*codes: int) -> dict[int, OpenApiResponse]:
    described = {
        400: "Invalid input; the message names the field.",
        401: "Not authenticated.",
        403: "The user's role in the project does not allow this.",
        404: "No such object, or not one of the user's projects.",
        409: "The job has no file to download (yet).",
        410: "The job's file is no longer in storage.",
        422: "Not possible given the stored data; the message says why.",
    }
    return {code: OpenApiResponse(ErrorSerializer, description=described[code]) for code in codes}


def check_json_types(fields: dict[str, serializers.Field], data: Any, where: str = "") -> None:
    """JSON values of the type the schema documents: DRF would turn 12 into "12" and "yes"
    into true, accepting what the schema says is invalid."""
    if not isinstance(data, dict) or isinstance(data, MultiValueDict):
        return  # a form (its values are text), or not an object: the serializer says more
    for name, field in fields.items():
        if name not in data or field.read_only:
            continue
        value, place = data[name], f"{where}{name}"
        if value is None:
            continue  # the serializer knows whether the field may be null
        expected = _json_type(field)
        if expected is not None and not _is_json(value, expected):
            raise InvalidRequest(f"{place}: must be {KIND_NAMES[expected]}, got {value!r}")
        _check_integer_range(field, value, place)
        if isinstance(field, serializers.ListSerializer):
            for i, item in enumerate(value if isinstance(value, list) else []):
                check_json_types(field.child.fields, item, f"{place}[{i}].")
        elif isinstance(field, Serializer):
            check_json_types(field.fields, value, f"{place}.")
        elif isinstance(field, serializers.ListField) and isinstance(value, list):
            child = _json_type(field.child)
            for i, item in enumerate(value):
                if child is not None and item is not None and not _is_json(item, child):
                    raise InvalidRequest(f"{place}[{i}]: must be {KIND_NAMES[child]}, got {item!r}")
                _check_integer_range(field.child, item, f"{place}[{i}]")


def _check_integer_range(field: serializers.Field, value: Any, place: str) -> None:
    """An integer field without bounds of its own takes what the schema documents for every
    integer (``config/schema.py``): the database's integers, never a number it cannot hold."""
    if not isinstance(field, serializers.IntegerField) or not _is_json(value, int):
        return
    low = -MAX_INT - 1 if field.min_value is None else field.min_value
    high = MAX_INT if field.max_value is None else field.max_value
    # A bound the field sets itself is DRF's to check, with its own message.
    if (field.min_value is None and value < low) or (field.max_value is None and value > high):
        raise InvalidRequest(f"{place}: must be between {low} and {high}, got {value}")


def _json_type(field: serializers.Field) -> type | None:
    if isinstance(field, serializers.BooleanField):
        return bool
    if isinstance(field, serializers.IntegerField):
        return int
    if isinstance(field, serializers.ChoiceField):
        kinds = {type(choice) for choice in field.choices}
        return kinds.pop() if len(kinds) == 1 and kinds <= {str, int} else None
    if isinstance(field, serializers.CharField):
        return str
    if isinstance(field, serializers.ListField | serializers.ListSerializer):
        return list
    if isinstance(field, serializers.DictField | Serializer):
        return dict
    return None


def _is_json(value: Any, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def check_serializer(serializer: Serializer) -> dict[str, Any]:
    """The validated data, or :class:`InvalidRequest` (a 400) naming the first bad field."""
    check_json_types(serializer.fields, serializer.initial_data)
    if serializer.is_valid():
        return serializer.validated_data
    field, messages = next(iter(serializer.errors.items()))
    message = messages[0] if isinstance(messages, list) else messages
    if isinstance(message, dict):  # a nested field: name its first key
        key, inner = next(iter(message.items()))
        field, message = f"{field}.{key}", inner[0] if isinstance(inner, list) else inner
    if field == "non_field_errors":
        raise InvalidRequest(str(message))
    raise InvalidRequest(f"{field}: {message}")


class WaypointAPIView(BoundedParsers, APIView):
    """The base of every endpoint; domain errors are mapped in ``config/errors.py``, and JSON
    bodies are read within bounds (``trajectories.parsers``)."""


class GoldKnown:
    """A generic view that tells its serializers who may see gold (``trajectories.gold``),
    from the project or trajectory it has loaded: ``self.gold`` primed before serializing."""

    gold: GoldRule | None = None

    def gold_rule(self) -> GoldRule:
        if self.gold is None:
            self.gold = GoldRule(self.request.user)
        return self.gold

    def get_serializer_context(self) -> dict[str, Any]:
        return {**super().get_serializer_context(), "gold": self.gold_rule()}


class RenderedResponse(Response):
    """A response whose body its accepted renderer made before (and a cache kept)."""

    def __init__(self, content: bytes) -> None:
        super().__init__()
        self.rendered = content

    @property
    def rendered_content(self) -> bytes:
        renderer = self.accepted_renderer
        charset = f"; charset={renderer.charset}" if renderer.charset else ""
        self["Content-Type"] = f"{renderer.media_type}{charset}"
        return self.rendered


class Pagination(PageNumberPagination):
    """``page`` and ``page_size`` are checked, not guessed: a bad one is a 400 naming it."""

    page_size_query_param = "page_size"
    max_page_size = 500
    last_page_strings = ()  # a page is a number, as the schema says

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        return _bounded_int(raw, self.page_size_query_param, 1, self.max_page_size)

    def get_page_number(self, request: Request, paginator) -> int:
        raw = request.query_params.get(self.page_query_param)
        if raw is None:
            return 1
        return _bounded_int(raw, self.page_query_param, 1, MAX_INT)

    def get_schema_operation_parameters(self, view) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        bounds = {
            self.page_query_param: {"minimum": 1, "maximum": MAX_INT},
            self.page_size_query_param: {"minimum": 1, "maximum": self.max_page_size},
        }
        for parameter in parameters:
            parameter["schema"].update(bounds.get(parameter["name"], {}))
            if parameter["name"] == self.page_size_query_param:
                parameter["description"] = (
                    f"Results per page, 1 to {self.max_page_size} (default {self.page_size})."
                )
        return parameters


def _bounded_int(raw: str, name: str, low: int, high: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise InvalidRequest(f"{name}: must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise InvalidRequest(f"{name}: must be between {low} and {high}, got {value}")
    return value


# ---------------------------------------------------------------- projects


def with_summary(projects: QuerySet[Project], user) -> QuerySet[Project]:
    """Annotate the user's role and the project's sizes (subqueries: no row blow-up)."""

    def count_of(model) -> Coalesce:
        counted = (
            model.objects.filter(project=OuterRef("pk"))
            .order_by()
            .values("project")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return Coalesce(Subquery(counted, output_field=IntegerField()), 0)

    role = Membership.objects.filter(project=OuterRef("pk"), user=user.pk).values("role")[:1]
    return projects.select_related("created_by").annotate(
        user_role=Subquery(role),
        task_count=count_of(Task),
        trajectory_count=count_of(Trajectory),
    )


@extend_schema(tags=["projects"])
class ProjectListView(WaypointAPIView, generics.ListAPIView):
    """Projects the user is a member of; anyone signed in may create one."""

    serializer_class = ProjectSerializer
    pagination_class = Pagination

    def get_queryset(self) -> QuerySet[Project]:
        params = self.request.query_params
        return search_projects(
            with_summary(projects_of(self.request.user), self.request.user),
            params.get("search", ""),
            params.get("sort"),
        )

    @extend_schema(
        summary="List the projects the user is a member of",
        parameters=[
            OpenApiParameter("search", str, description="Part of the name or description."),
            OpenApiParameter(
                "sort",
                enum=[*PROJECT_SORTS, *(f"-{key}" for key in PROJECT_SORTS)],
                description="Sort key; a leading - reverses it. Default: name.",
            ),
        ],
        responses={200: ProjectSerializer(many=True), **_errors(400, 401)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Create a project; the user becomes its admin",
        request=ProjectCreateSerializer,
        responses={201: ProjectSerializer, **_errors(400, 401)},
    )
    def post(self, request: Request) -> Response:
        data = check_serializer(ProjectCreateSerializer(data=request.data))
        project = do_create_project(data["name"], request.user, data["description"])
        project = with_summary(Project.objects.filter(pk=project.pk), request.user).get()
        serializer = ProjectSerializer(project, context=self.get_serializer_context())
        return Response(serializer.data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["projects"])
class ProjectDetailView(WaypointAPIView, generics.RetrieveAPIView):
    """One project, with the user's role in it."""

    serializer_class = ProjectSerializer

    def get_object(self) -> Project:
        project = access_project(self.request.user, self.kwargs["project_id"])
        return with_summary(Project.objects.filter(pk=project.pk), self.request.user).get()

    @extend_schema(summary="A project", responses={200: ProjectSerializer, **_errors(401, 404)})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Change the project's settings (admins)",
        request=ProjectUpdateSerializer,
        responses={200: ProjectSerializer, **_errors(400, 401, 403, 404)},
    )
    def patch(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id, roles=(Role.ADMIN,))
        data = check_serializer(ProjectUpdateSerializer(data=request.data))
        do_update_project(project, request.user, **data)
        return self.get(request, project_id=project_id)


# ---------------------------------------------------------------- members


def members_of(project: Project) -> QuerySet[Membership]:
    return project.memberships.select_related("user").order_by("user__username")


@extend_schema(tags=["projects"])
class ProjectMemberListView(WaypointAPIView, generics.ListAPIView):
    """A project's members; its admins add users by name."""

    serializer_class = MemberSerializer
    pagination_class = None  # a project has a handful of members, read whole

    def get_queryset(self) -> QuerySet[Membership]:
        return members_of(access_project(self.request.user, self.kwargs["project_id"]))

    @extend_schema(
        summary="The project's members and their roles",
        responses={200: MemberSerializer(many=True), **_errors(401, 404)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Add a user to the project (admins)",
        request=MemberCreateSerializer,
        responses={201: MemberSerializer, **_errors(400, 401, 403, 404)},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_project(request.user, project_id, roles=(Role.ADMIN,))
        data = check_serializer(MemberCreateSerializer(data=request.data))
        membership = do_add_membership(
            project, user_named(data["username"]), data["role"], request.user
        )
        return Response(MemberSerializer(membership).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["projects"])
class ProjectMemberDetailView(WaypointAPIView):
    """One member of a project: admins change the role or remove them; one admin always stays."""

    def _membership(self, request: Request, project_id: int, user_id: int, roles=None):
        project = access_project(request.user, project_id, roles=roles)
        return project, access_membership(project, user_id)

    @extend_schema(
        summary="A member's role", responses={200: MemberSerializer, **_errors(401, 404)}
    )
    def get(self, request: Request, project_id: int, user_id: int) -> Response:
        _, membership = self._membership(request, project_id, user_id)
        return Response(MemberSerializer(membership).data)

    @extend_schema(
        summary="Change a member's role (admins)",
        request=MemberRoleSerializer,
        responses={200: MemberSerializer, **_errors(400, 401, 403, 404)},
    )
    def patch(self, request: Request, project_id: int, user_id: int) -> Response:
        project, membership = self._membership(request, project_id, user_id, (Role.ADMIN,))
        data = check_serializer(MemberRoleSerializer(data=request.data))
        membership = do_set_membership(project, membership.user, data["role"], request.user)
        return Response(MemberSerializer(membership).data)

    @extend_schema(
        summary="Remove a member from the project (admins)",
        responses={204: None, **_errors(400, 401, 403, 404)},
    )
    def delete(self, request: Request, project_id: int, user_id: int) -> Response:
        project, membership = self._membership(request, project_id, user_id, (Role.ADMIN,))
        do_remove_membership(project, membership.user, request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


# ---------------------------------------------------------------- tasks


@extend_schema(tags=["tasks"])
class ProjectTaskListView(GoldKnown, WaypointAPIView, generics.ListAPIView):
    """The tasks (instructions) of a project, oldest first."""

    serializer_class = TaskSerializer
    pagination_class = Pagination

    def get_queryset(self) -> QuerySet[Task]:
        project = access_project(self.request.user, self.kwargs["project_id"])
        self.gold_rule().visible(project)
        return Task.objects.filter(project=project)

    @extend_schema(
        summary="The project's tasks",
        responses={200: TaskSerializer(many=True), **_errors(401, 404)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


@extend_schema(tags=["tasks"])
class TaskDetailView(GoldKnown, WaypointAPIView, generics.RetrieveAPIView):
    """One task: goal, apps, intent, difficulty, gold answer and memory items."""

    serializer_class = TaskSerializer

    def get_object(self) -> Task:
        return access_task(self.request.user, self.kwargs["task_id"])

    @extend_schema(summary="A task", responses={200: TaskSerializer, **_errors(401, 404)})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


# ---------------------------------------------------------------- trajectories

TRAJECTORY_FILTERS = [
    # An empty value filters nothing, as in a form left blank.
    OpenApiParameter("status", enum=[*Status.values, ""], description="Trajectory status."),
    OpenApiParameter("outcome", enum=[*Outcome.values, ""], description="Trajectory outcome."),
    OpenApiParameter("source", enum=[*Source.values, ""], description="How it was made."),
    OpenApiParameter("task", str, description="A task uid."),
    OpenApiParameter("recorder", str, description="The recorder's username or recorded name."),
    OpenApiParameter(
        "app",
        str,
        description="An app: part of its package or label, named by the task or on a screen.",
    ),
]
TRAJECTORY_SORT = OpenApiParameter(
    "sort",
    enum=[*TRAJECTORY_SORTS, *(f"-{key}" for key in TRAJECTORY_SORTS)],
    description="Sort key; a leading - reverses it. Default: -created (newest first).",
)


def list_filters(params: Mapping[str, Any]) -> dict[str, Any]:
    """The list filters among the query parameters (``page`` and the like are not filters)."""
    names = [p.name for p in TRAJECTORY_FILTERS]
    return {name: params.get(name) for name in names if name in params}


@extend_schema(tags=["trajectories"])
class ProjectTrajectoryListView(WaypointAPIView, generics.ListAPIView):
    """A project's trajectories, filtered by status, outcome, task uid, source or recorder."""

    serializer_class = TrajectorySerializer
    pagination_class = Pagination

    project: Project | None = None  # checked by get()

    def get_queryset(self) -> QuerySet[Trajectory]:
        project = self.project or access_project(self.request.user, self.kwargs["project_id"])
        filters = list_filters(self.request.query_params)
        sort = self.request.query_params.get("sort")
        return list_rows(trajectory_list(self.request.user, project, filters, sort))

    @extend_schema(
        summary="The project's trajectories, newest first unless sorted",
        parameters=[*TRAJECTORY_FILTERS, TRAJECTORY_SORT],
        responses={200: TrajectorySerializer(many=True), **_errors(400, 401, 404)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        self.project = access_project(request.user, self.kwargs["project_id"])

        def page() -> Any:
            return super(ProjectTrajectoryListView, self).get(request, *args, **kwargs).data

        # Members see the same rows: the key is what was asked (links name the host), not who.
        asked = request.build_absolute_uri()
        renderer, media_type = request.accepted_renderer, request.accepted_media_type
        if renderer.format != "json":  # the browsable API draws its page around the rows
            return Response(list_cache.remembered(self.project, "api", asked, page))
        # JSON is kept as it is sent: most requests then render nothing.
        context = self.get_renderer_context()
        content = list_cache.remembered(
            self.project,
            "api.json",
            (asked, media_type),
            lambda: renderer.render(page(), media_type, context),
        )
        return RenderedResponse(content)


@extend_schema(tags=["trajectories"])
class TrajectoryDetailView(GoldKnown, WaypointAPIView, generics.RetrieveAPIView):
    """One trajectory: device facts, task, counts, subgoals, memory targets, anchors and links."""

    serializer_class = TrajectoryDetailSerializer

    def get_object(self) -> Trajectory:
        trajectory = access_trajectory(self.request.user, self.kwargs["trajectory_id"])
        self.gold_rule().knows(trajectory)
        return (
            Trajectory.objects.filter(pk=trajectory.pk)
            .select_related(
                "task", "recorded_by", "final_screen__screenshot", "final_screen__ui_xml"
            )
            .prefetch_related(
                "subgoals",
                "memory_targets",
                Prefetch(
                    "anchors__links_out", queryset=AnchorLink.objects.select_related("target")
                ),
            )
            .get()
        )

    @extend_schema(
        summary="A trajectory with its device, task, counts and labels",
        responses={200: TrajectoryDetailSerializer, **_errors(401, 404)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


# ---------------------------------------------------------------- steps


def steps_of(trajectory: Trajectory) -> QuerySet[Step]:
    return (
        Step.objects.filter(trajectory=trajectory)
        .select_related("screen__screenshot", "screen__ui_xml")
        .order_by("index")
    )


@extend_schema(tags=["trajectories"])
class StepListView(GoldKnown, WaypointAPIView, generics.ListAPIView):
    """Every step of a trajectory, ordered by index, each with the screen before it."""

    serializer_class = StepSerializer
    pagination_class = None  # a trajectory is read whole; steps are few (tens to hundreds)

    def get_queryset(self) -> QuerySet[Step]:
        trajectory = access_trajectory(self.request.user, self.kwargs["trajectory_id"])
        self.gold_rule().knows(trajectory)
        return steps_of(trajectory)

    @extend_schema(
        summary="Every step of a trajectory, by index, with its screen",
        responses={200: StepSerializer(many=True), **_errors(401, 404)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


@extend_schema(tags=["trajectories"])
class StepDetailView(GoldKnown, WaypointAPIView, generics.RetrieveAPIView):
    """One step of a trajectory, by its index."""

    serializer_class = StepSerializer

    def get_object(self) -> Step:
        trajectory = access_trajectory(self.request.user, self.kwargs["trajectory_id"])
        self.gold_rule().knows(trajectory)
        try:
            return steps_of(trajectory).get(index=self.kwargs["index"])
        except Step.DoesNotExist:
            raise Http404(
                f"No step {self.kwargs['index']} (the trajectory has {trajectory.step_count} steps)"
            ) from None

    @extend_schema(
        summary="One step of a trajectory", responses={200: StepSerializer, **_errors(401, 404)}
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


# ---------------------------------------------------------------- jobs


def job_response(job: Job, request: Request, code: int = status.HTTP_200_OK) -> Response:
    return Response(JobSerializer(job, context={"request": request}).data, status=code)


@extend_schema(tags=["jobs"])
class ProjectJobListView(WaypointAPIView, generics.ListAPIView):
    """A project's import and export jobs."""

    serializer_class = JobSerializer
    pagination_class = Pagination

    def get_queryset(self) -> QuerySet[Job]:
        project = access_project(self.request.user, self.kwargs["project_id"])
        return Job.objects.filter(project=project).select_related("created_by")

    @extend_schema(
        summary="The project's import and export jobs, newest first",
        responses={200: JobSerializer(many=True), **_errors(401, 404)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


@extend_schema(tags=["jobs"])
class JobDetailView(WaypointAPIView, generics.RetrieveAPIView):
    """A job's status, progress, counts and, once an export has succeeded, its download URL."""

    serializer_class = JobSerializer

    def get_object(self) -> Job:
        return with_true_status(access_job(self.request.user, self.kwargs["job_id"]))

    @extend_schema(
        summary="A job's status and progress", responses={200: JobSerializer, **_errors(401, 404)}
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


@extend_schema(tags=["jobs"])
class JobRetryView(WaypointAPIView):
    """Run a failed job again, from the start, with the same input and parameters."""

    @extend_schema(
        summary="Retry a failed job",
        request=None,
        responses={202: JobSerializer, **_errors(401, 403, 404, 409)},
    )
    def post(self, request: Request, job_id: int) -> Response:
        job = with_true_status(access_job(request.user, job_id))
        if job.status != JobStatus.FAILED:
            raise Conflict(f"job {job.pk} is {job.status}: only a failed job can be retried")
        return job_response(do_retry_job(job, request.user), request, status.HTTP_202_ACCEPTED)


@extend_schema(tags=["jobs"])
class JobDownloadView(WaypointAPIView):
    """The output file of a succeeded export, streamed from storage."""

    @extend_schema(
        summary="Download the output file of a succeeded export",
        responses={
            (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="The file."),
            **_errors(401, 403, 404, 409, 410),
        },
    )
    def get(self, request: Request, job_id: int) -> FileResponse:
        job = access_job(request.user, job_id)
        if job.kind != JobKind.EXPORT:
            raise Conflict(f"job {job.pk} is an {job.kind}: it has no file to download")
        check_job_file(request.user, job, "download")
        if job.status != JobStatus.SUCCEEDED or not job.output_path:
            raise Conflict(
                f"job {job.pk} is {job.status}: its file can be downloaded once it has succeeded"
            )
        try:
            handle = default_storage.open(job.output_path, "rb")
        except FileNotFoundError:
            raise Gone(
                f"job {job.pk}: its file {job.output_path} is no longer in storage"
            ) from None
        return FileResponse(handle, as_attachment=True, filename=download_name(job))


# ---------------------------------------------------------------- blobs


@extend_schema(tags=["steps"])
class BlobView(WaypointAPIView):
    """A screenshot or UI XML by its sha256, for members of a project that shows it."""

    @extend_schema(
        summary="Download a screenshot or UI XML",
        responses={
            **{
                (200, content_type): OpenApiResponse(
                    OpenApiTypes.BINARY, description="The blob's bytes, with its content type."
                )
                for content_type in sorted(Blob.EXTENSIONS)
            },
            304: OpenApiResponse(description="Not modified: If-None-Match names this blob."),
            **_errors(401, 404),
        },
    )
    def get(self, request: Request, sha256: str) -> HttpResponse:
        return blob_response(request, access_blob(request.user, sha256))


# ---------------------------------------------------------------- tokens


@extend_schema(
    tags=["auth"],
    summary="Exchange a username and password for an API token",
    description="Send the token as the header `Authorization: Token <token>`.",
    request=TokenRequestSerializer,
    responses={
        200: TokenSerializer,
        400: OpenApiResponse(ErrorSerializer, description="A missing username or password."),
        401: OpenApiResponse(ErrorSerializer, description="Wrong credentials."),
        429: OpenApiResponse(
            ErrorSerializer,
            description="Too many failed logins for the account or from the address "
            "(WAYPOINT_LOGIN_FAILURE_LIMIT): refused, even with the right password, for "
            "WAYPOINT_LOGIN_COOLOFF_SECONDS.",
        ),
    },
    auth=[],
)
class TokenView(BoundedParsers, ObtainAuthToken):
    """DRF's ``obtain_auth_token``, documented, and throttled like the login page; wrong
    credentials are a 401, not a 400."""

    serializer_class = TokenRequestSerializer

    def post(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            # Axes marks the (DRF) request it refused; its middleware only sees Django's.
            if getattr(request, "axes_locked_out", False):
                return locked_out_json()
            if "non_field_errors" in serializer.errors:
                raise exceptions.AuthenticationFailed(serializer.errors["non_field_errors"][0])
            raise exceptions.ValidationError(serializer.errors)
        token, _ = Token.objects.get_or_create(user=serializer.validated_data["user"])
        return Response({"token": token.key})

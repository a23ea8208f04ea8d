"""HTML pages for projects' trajectories, blobs and import/export jobs.

Every view fetches its object through ``trajectories.access``: outsiders get a 404, members
without the needed role a 403 (``AccessDenied``, mapped to a page in ``config/errors.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.files.storage import default_storage
from django.core.paginator import Paginator as DjangoPaginator
from django.db.models import Q, QuerySet
from django.forms.renderers import Jinja2
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotModified,
    JsonResponse,
)
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from . import list_cache, selectors
from .access import (
    access_blob,
    access_job,
    access_membership,
    access_project,
    access_trajectory,
    projects_of,
    role_in,
)
from .accounts import UnknownUser, is_site_admin, user_named
from .gold import can_see_gold, check_job_file
from .jobs import (
    do_retry_job,
    download_name,
    recent_jobs,
    with_true_status,
)
from .models import (
    Anchor,
    AnchorLink,
    Blob,
    JobStatus,
    MemoryTarget,
    Outcome,
    Project,
    Role,
    Screen,
    Source,
    Status,
    Step,
    Subgoal,
    Trajectory,
)
from .services import (
    do_add_membership,
    do_remove_membership,
    do_set_membership,
    do_update_project,
)
from .sorting import sort_columns
from .validation import InvalidData

PAGE_SIZE = 25
JOB_ROLES = (Role.ADMIN, Role.REVIEWER, Role.ANNOTATOR)
BLOB_CACHE = "private, max-age=31536000, immutable"


class Paginator(DjangoPaginator):
    """Django's paginator, told the count when the caller already knows it (one query less)."""

    def __init__(self, object_list, per_page: int, *, count: int | None = None) -> None:
        super().__init__(object_list, per_page)
        if count is not None:
            self.__dict__["count"] = count  # the cached property Django would compute


def _vary_on_htmx(response: HttpResponse) -> HttpResponse:
    # The same URL answers with a fragment or a whole page: caches must keep both apart.
    patch_vary_headers(response, ("HX-Request", "HX-Target"))
    return response


# ---------------------------------------------------------------------------- trajectory list

FILTER_RENDERER = Jinja2()  # one per process: each builds its own Jinja2 environment


class TrajectoryFilterForm(forms.Form):
    """The list's filters. The task is picked by typing part of its goal (suggestions come from
    :func:`task_suggestions`), so the page costs the same with ten tasks or ten thousand.

    Its widgets are drawn by Django's Jinja2 form templates: the same controls as the
    Django templates draw, at two thirds of their cost, on every list page the cache misses."""

    default_renderer = FILTER_RENDERER

    task = forms.IntegerField(required=False, widget=forms.HiddenInput)
    task_goal = forms.CharField(
        required=False,
        label="Task",  # a goal can be long: no length limit, a picked one is shown whole
        widget=forms.TextInput(
            attrs={
                "type": "search",
                "placeholder": "any task: type part of its goal",
                "autocomplete": "off",
                "list": "task-suggestions",
                "data-pick": "task",
            }
        ),
    )
    status = forms.ChoiceField(required=False, choices=[("", "any status"), *Status.choices])
    outcome = forms.ChoiceField(required=False, choices=[("", "any outcome"), *Outcome.choices])
    source = forms.ChoiceField(required=False, choices=[("", "any source"), *Source.choices])
    app = forms.CharField(required=False, max_length=255)
    recorder = forms.ChoiceField(required=False)

    def __init__(self, data, project: Project, recorders: list[str]) -> None:
        data = data.copy()
        if data.get("task") and not data.get("task_goal"):
            # A link naming the task by id shows its goal in the search field.
            with contextlib.suppress(ValueError):
                goal = project.tasks.filter(pk=int(data["task"])).values_list("goal", flat=True)
                data["task_goal"] = goal.first() or ""
        super().__init__(data)
        self.fields["task_goal"].widget.attrs["data-suggest"] = reverse(
            "task-suggestions", args=[project.pk]
        )
        self.fields["recorder"].choices = [("", "anyone")] + [(r, r) for r in recorders]

    def filters(self) -> dict[str, Any] | None:
        """The chosen filters for :func:`trajectory_list`; None when the form is invalid."""
        if not self.is_valid():
            return None
        data = self.cleaned_data
        return {
            "task_id": data["task"],
            # Text typed without picking a suggestion: tasks whose goal contains it.
            "task_goal": "" if data["task"] else data["task_goal"].strip(),
            "status": data["status"],
            "outcome": data["outcome"],
            "source": data["source"],
            "recorder": data["recorder"],
            "app": data["app"].strip(),
        }


def recorder_names(project: Project) -> list[str]:
    """The names recorders gave, for the list's recorder filter."""
    return list(
        project.trajectories.exclude(recorder_name="")
        .order_by("recorder_name")
        .values_list("recorder_name", flat=True)
        .distinct()
    )


TRAJECTORY_COLUMNS = [
    ("Task goal", "goal", "goal"),
    ("Steps", "steps", "num"),
    ("Status", "status", ""),
    ("Outcome", "outcome", ""),
    ("Source", "source", ""),
    ("Recorder", "recorder", ""),
    ("Created", "created", "nowrap"),
]


@login_required
@require_GET
def trajectory_list(request: HttpRequest, project_id: int) -> HttpResponse:
    project = access_project(request.user, project_id)
    if (
        request.htmx
        and request.htmx.target == "trajectory-table"
        and not request.htmx.history_restore_request
    ):
        context = _list_context(request, project, whole=False)
        return _vary_on_htmx(render(request, "trajectories/_trajectory_table.html", context))
    # All but the recent jobs is the same for every member who asks for the same URL, until
    # the project's trajectories change (list_cache.py): the key is what was asked, not who.
    asked = (request.GET.urlencode(), project.name, project.description)
    body = list_cache.remembered(
        project,
        "page",
        asked,
        lambda: render_to_string(
            "trajectories/_list_body.html", _list_context(request, project, whole=True), request
        ),
    )
    context = {
        "project": project,
        "body": body,
        "jobs": recent_jobs(project),
    }
    return _vary_on_htmx(render(request, "trajectories/trajectory_list.html", context))


def _list_context(request: HttpRequest, project: Project, *, whole: bool) -> dict[str, Any]:
    """The filter form, the page of rows and (``whole``) the progress strip of the list."""
    recorders = list_cache.remembered(project, "recorders", (), lambda: recorder_names(project))
    form = TrajectoryFilterForm(request.GET, project, recorders)
    filters = form.filters()
    sort = request.GET.get("sort", "")
    # The whole page shows the count per status; without filters but the status, the list's
    # count is among them, and the paginator need not count again.
    counts = (
        list_cache.remembered(project, "counts", (), lambda: selectors.status_counts(project))
        if whole
        else None
    )
    known = None
    if counts is not None and filters is not None:
        if not any(v for k, v in filters.items() if k != "status"):
            known = counts.get(filters["status"], 0) if filters["status"] else sum(counts.values())

    def table() -> tuple[int, int, str, list[int]]:
        trajectories = selectors.list_rows(
            selectors.trajectory_list(request.user, project, filters, sort)
            if filters is not None
            else Trajectory.objects.none()
        )
        page = Paginator(trajectories, PAGE_SIZE, count=known).get_page(request.GET.get("page"))
        rows = render_to_string("trajectories/_trajectory_rows.html", {"trajectories": page})
        return page.paginator.count, page.number, rows, [t.pk for t in page]

    count, number, rows, listed = list_cache.remembered(
        project,
        "table",
        (filters, sort, request.GET.get("page")),
        table,
    )
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "project": project,
        "form": form,
        "page": Paginator(Trajectory.objects.none(), PAGE_SIZE, count=count).page(number),
        "rows": rows,
        "listed": listed,  # the ids of the rows, in order
        "query": query.urlencode(),
        "columns": sort_columns(
            request, TRAJECTORY_COLUMNS, sort or selectors.DEFAULT_TRAJECTORY_SORT
        ),
    }
    if counts is not None:
        total = sum(counts.values())
        context["progress"] = {
            "shares": selectors.status_shares(counts),
            "annotated": 100 * sum(counts.get(s, 0) for s in selectors.ANNOTATED) / (total or 1),
            "approved": 100 * counts.get(Status.APPROVED, 0) / (total or 1),
        }
    return context


TASK_SUGGESTIONS = 20


@login_required
@require_GET
def task_suggestions(request: HttpRequest, project_id: int) -> JsonResponse:
    """Up to 20 of the project's tasks whose goal or uid contains ``q``, for the task filter."""
    project = access_project(request.user, project_id)
    typed = request.GET.get("q", "").strip()[:200]
    tasks = project.tasks.order_by("goal", "id")
    if typed:
        tasks = tasks.filter(Q(goal__icontains=typed) | Q(uid__icontains=typed))
    found = list(tasks.values("id", "uid", "goal")[: TASK_SUGGESTIONS + 1])
    return JsonResponse({"tasks": found[:TASK_SUGGESTIONS], "more": len(found) > TASK_SUGGESTIONS})


# ---------------------------------------------------------------------------- trajectory page


def steps_of(trajectory: Trajectory) -> QuerySet[Step]:
    return trajectory.steps.select_related("screen__screenshot", "screen__ui_xml").order_by("index")


@login_required
@require_GET
def trajectory_detail(request: HttpRequest, trajectory_id: int) -> HttpResponse:
    trajectory = access_trajectory(request.user, trajectory_id)
    steps = list(steps_of(trajectory))
    try:
        selected_index = int(request.GET.get("step", 0))
    except ValueError:
        selected_index = 0
    selected = next((s for s in steps if s.index == selected_index), steps[0] if steps else None)
    final_screen = (
        Screen.objects.select_related("screenshot").filter(pk=trajectory.final_screen_id).first()
        if trajectory.final_screen_id
        else None
    )
    context = {
        "project": trajectory.project,
        "trajectory": trajectory,
        "task": trajectory.task,
        "steps": steps,
        "selected": selected,
        "final_screen": final_screen,
        "subgoals": Subgoal.objects.filter(trajectory=trajectory),
        "memory_targets": MemoryTarget.objects.filter(trajectory=trajectory),
        "anchors": Anchor.objects.filter(trajectory=trajectory),
        "links": AnchorLink.objects.filter(source__trajectory=trajectory).select_related(
            "source", "target"
        ),
        "show_gold": can_see_gold(request.user, trajectory.project),
    }
    return render(request, "trajectories/trajectory_detail.html", context)


@login_required
@require_GET
def step_detail(request: HttpRequest, trajectory_id: int, index: int) -> HttpResponse:
    trajectory = access_trajectory(request.user, trajectory_id)
    step = steps_of(trajectory).filter(index=index).first()
    if step is None:
        raise Http404("No such step")
    context = {
        "project": trajectory.project,
        "trajectory": trajectory,
        "step": step,
        "has_previous": index > 0,
        "has_next": index + 1 < trajectory.step_count,
    }
    if request.htmx and not request.htmx.history_restore_request:
        return _vary_on_htmx(render(request, "trajectories/_step_detail.html", context))
    return _vary_on_htmx(render(request, "trajectories/step_page.html", context))


# ---------------------------------------------------------------------------- blobs


@login_required
@require_GET
def blob(request: HttpRequest, sha256: str) -> HttpResponse:
    """A screenshot or UI XML, for members of a project with a screen that shows it."""
    return blob_response(request, access_blob(request.user, sha256))


def immutable_response(
    request: HttpRequest, etag: str, respond: Callable[[], HttpResponse]
) -> HttpResponse:
    """A response for content named by its hash: 304 when the browser has it, cached for long.

    ``respond`` builds the full response; it is called only when the browser lacks the file.
    """
    etag = f'"{etag}"'
    if request.headers.get("If-None-Match") == etag:
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = respond()
    # Content-addressed: the bytes behind a name never change.
    response["Cache-Control"] = BLOB_CACHE
    response["ETag"] = etag
    return response


def blob_response(request: HttpRequest, found: Blob) -> HttpResponse:
    """Serve a blob with the headers a content-addressed file deserves."""

    def respond() -> HttpResponse:
        try:
            handle = default_storage.open(found.storage_name, "rb")
        except FileNotFoundError:
            raise Http404("Blob file missing") from None
        response = FileResponse(handle, content_type=found.content_type)
        response["Content-Length"] = str(found.size)
        response["X-Content-Type-Options"] = "nosniff"
        # Uploaded XML is shown in our origin: it must never run as a document with scripts.
        response["Content-Security-Policy"] = (
            "default-src 'none'; style-src 'unsafe-inline'; sandbox"
        )
        return response

    return immutable_response(request, found.sha256, respond)


# ---------------------------------------------------------------------------- import / export


LABEL_WIDTH = 90


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def distinct_labels(texts: list[str], width: int = LABEL_WIDTH) -> list[str]:
    """Short labels for ``texts`` (sorted) that tell them apart: a text that fits is shown
    whole; a long one is cut, and when it shares a long beginning with a neighbour the cut
    keeps its opening and jumps to the part that differs ("In ShopMate, compare … Juniper Tent
    and the Orbit Tent; …")."""
    labels = []
    for i, text in enumerate(texts):
        if len(text) <= width:
            labels.append(text)
            continue
        shared = max(
            _common_prefix(text, texts[i - 1]) if i > 0 else 0,
            _common_prefix(text, texts[i + 1]) if i + 1 < len(texts) else 0,
        )
        if shared < width - 15:
            labels.append(text[: width - 1].rstrip() + "…")
            continue
        head = text[:24].rsplit(" ", 1)[0]
        start = text.rfind(" ", 0, max(shared - 12, len(head))) + 1
        rest = text[start : start + width - len(head) - 3]
        more = "…" if start + len(rest) < len(text) else ""
        labels.append(f"{head} … {rest.rstrip()}{more}")
    return labels


def task_choices(
    project: Project, width: int = LABEL_WIDTH, limit: int | None = None
) -> list[tuple[str, str]]:
    """(uid, label) of the project's tasks by goal, labels that tell them apart (same goals by
    their uid)."""
    tasks = list(project.tasks.order_by("goal", "uid").values_list("uid", "goal")[:limit])
    labels = distinct_labels([goal for _, goal in tasks], width)
    return [
        (uid, label if labels.count(label) == 1 else f"{label} ({uid})")
        for (uid, _), label in zip(tasks, labels, strict=True)
    ]


# ---------------------------------------------------------------------------- members

MANAGE_MEMBERS = (Role.ADMIN,)


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150, label="User name")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)


def _members_page(
    request: HttpRequest,
    project: Project,
    *,
    form: MemberForm | None = None,
    error: str = "",
    unknown: UnknownUser | None = None,
) -> HttpResponse:
    context = {
        "project": project,
        "memberships": project.memberships.select_related("user").order_by("user__username"),
        "can_manage": role_in(project, request.user) in MANAGE_MEMBERS,
        "roles": Role.choices,
        "form": form or MemberForm(),
        "error": error,
        "unknown": unknown,
    }
    if unknown is not None and is_site_admin(request.user):
        asked = {"username": unknown.username, "project": project.pk}
        asked["role"] = form.cleaned_data["role"] if form is not None else Role.ANNOTATOR
        context["create_user_url"] = f"{reverse('user-list')}?{urlencode(asked)}"
    if request.htmx and not request.htmx.history_restore_request:
        return _vary_on_htmx(render(request, "trajectories/_members.html", context))
    return _vary_on_htmx(render(request, "trajectories/members.html", context))


def _after_member_change(request: HttpRequest, project: Project) -> HttpResponse:
    if not projects_of(request.user).filter(pk=project.pk).exists():
        # The user took themselves out: the project is no longer theirs to see.
        if request.htmx:
            return HttpResponseClientRedirect(reverse("project-list"))
        return redirect("project-list")
    if request.htmx:
        return _members_page(request, project)
    return redirect("project-members", project.pk)


@login_required
@require_http_methods(["GET", "POST"])
def project_members(request: HttpRequest, project_id: int) -> HttpResponse:
    """Who is in the project, with what role; admins add people by user name."""
    if request.method == "GET":
        return _members_page(request, access_project(request.user, project_id))
    project = access_project(request.user, project_id, roles=MANAGE_MEMBERS)
    form = MemberForm(request.POST)
    if not form.is_valid():
        return _members_page(request, project, form=form)
    try:
        user = user_named(form.cleaned_data["username"])
        do_add_membership(project, user, form.cleaned_data["role"], request.user)
    except UnknownUser as exc:
        return _members_page(request, project, form=form, unknown=exc)
    except InvalidData as exc:
        return _members_page(request, project, form=form, error=str(exc))
    return _after_member_change(request, project)


@login_required
@require_POST
def project_member_role(request: HttpRequest, project_id: int, user_id: int) -> HttpResponse:
    project = access_project(request.user, project_id, roles=MANAGE_MEMBERS)
    membership = access_membership(project, user_id)
    try:
        do_set_membership(project, membership.user, request.POST.get("role", ""), request.user)
    except InvalidData as exc:
        return _members_page(request, project, error=str(exc))
    return _after_member_change(request, project)


@login_required
@require_POST
def project_member_remove(request: HttpRequest, project_id: int, user_id: int) -> HttpResponse:
    project = access_project(request.user, project_id, roles=MANAGE_MEMBERS)
    membership = access_membership(project, user_id)
    try:
        do_remove_membership(project, membership.user, request.user)
    except InvalidData as exc:
        return _members_page(request, project, error=str(exc))
    return _after_member_change(request, project)


@login_required
@require_POST
def project_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    """The project's settings (admins), on its Members page: a checkbox left out is off."""
    project = access_project(request.user, project_id, roles=MANAGE_MEMBERS)
    do_update_project(project, request.user, hide_gold=bool(request.POST.get("hide_gold")))
    return redirect(f"{reverse('project-members', args=[project.pk])}#project-settings")


# ---------------------------------------------------------------------------- jobs


@login_required
@require_GET
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = with_true_status(access_job(request.user, job_id))
    context = {"project": job.project, "job": job}
    if request.htmx and not request.htmx.history_restore_request:
        return _vary_on_htmx(render(request, "trajectories/_job_status.html", context))
    return _vary_on_htmx(render(request, "trajectories/job_detail.html", context))


@login_required
@require_POST
def job_retry(request: HttpRequest, job_id: int) -> HttpResponse:
    job = access_job(request.user, job_id)
    # A job that is not failed (retried twice, or still running) is shown as it is.
    with contextlib.suppress(InvalidData):
        do_retry_job(job, request.user)
    return redirect("job-detail", job.pk)


@login_required
@require_GET
def job_download(request: HttpRequest, job_id: int) -> FileResponse:
    job = access_job(request.user, job_id)
    if job.status != JobStatus.SUCCEEDED or not job.output_path:
        raise Http404("This job has no output")
    check_job_file(request.user, job, "download")
    try:
        handle = default_storage.open(job.output_path, "rb")
    except FileNotFoundError:
        raise Http404("The job's output is gone") from None
    return FileResponse(handle, as_attachment=True, filename=download_name(job))

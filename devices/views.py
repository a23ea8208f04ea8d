"""The recording console: devices, leases, the live screen, and actions recorded as steps.

Views are thin: the lease (``check_driver``) or an ``access_*`` helper first, then a service.
Every view that names a device is ``@device_members_only``: outsiders get a 404.
Actions come from the console's script through htmx and answer with the recording panel
(filmstrip, step labels, messages), swapped in without a page reload.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    JsonResponse,
)
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from trajectories.access import (
    AccessDenied,
    access_blob,
    access_project,
    access_trajectory,
    projects_of,
    role_in,
)
from trajectories.blobs import read_blob
from trajectories.gold import can_see_gold
from trajectories.images import THUMB_WIDTH, make_thumbnail
from trajectories.labels.protocol import (
    RECORDING,
    StaleVersion,
    do_undo,
    next_undo_part,
    undo_state,
)
from trajectories.models import (
    ActionType,
    MemoryTarget,
    Project,
    Status,
    Step,
    Task,
    Trajectory,
)
from trajectories.validation import ACTION_FIELDS, InvalidData
from trajectories.views import immutable_response

from .access import access_device, is_site_admin
from .api import RECORDING_ROLES, device_reports, frame_response, task_to_record
from .services import (
    DeviceGone,
    DeviceUnavailable,
    LeaseConflict,
    RecordingError,
    active_lease,
    check_driver,
    connect,
    do_add_note,
    do_delete_recorded_memory_target,
    do_edit_memory_target,
    do_finish_recording,
    do_heartbeat,
    do_import_virtual_tasks,
    do_mark_memory_target,
    do_release_device,
    do_resume_recording,
    do_start_recording,
    do_take_device,
    do_undo_last_step,
    do_update_step_labels,
    find_device,
    record_step,
)
from .services.adb import DEVICE_ERRORS, installed_packages
from .services.environment import read_environment
from .services.inventory import do_update_device
from .services.leases import final_stretch_notice, latest_end
from .services.recording import VIRTUAL_TASK_PREFIX, NoFocusedField
from .virtual.status import read_status

RECORDING_ERRORS = (
    InvalidData,
    StaleVersion,
    RecordingError,
    LeaseConflict,
    DeviceUnavailable,
    AccessDenied,
)


def device_members_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Only users with the device in one of their projects (or site admins) get to the view."""

    @wraps(view)
    def wrapped(request: HttpRequest, serial: str, *args: Any, **kwargs: Any) -> HttpResponse:
        access_device(request.user, serial)
        return view(request, serial, *args, **kwargs)

    return wrapped


def recordable_projects(user) -> list[Project]:
    return [p for p in projects_of(user) if role_in(p, user) in RECORDING_ROLES]


# ------------------------------------------------------------------------------ device list


def virtual_device_problem() -> str:
    """Why the embedded virtual device is missing from the list, when it should be there."""
    if not settings.WAYPOINT_VIRTUAL_DEVICE:
        return ""
    status = read_status(settings.WAYPOINT_VIRTUAL_DEVICE_STATUS)
    if status is None:
        return (
            "the virtual device was not started: `make run` starts it, or run "
            "`python manage.py virtual_device --connect`"
        )
    return status.problem


@login_required
@require_GET
def device_list(request: HttpRequest) -> HttpResponse:
    interrupted = (
        Trajectory.objects.filter(recorded_by=request.user, status=Status.INTERRUPTED)
        .select_related("task")
        .order_by("-updated_at")[:20]
    )
    site_admin = is_site_admin(request.user)
    reports = device_reports(request.user)
    context = {
        "reports": reports,
        "reports_have_devices": any(report.devices for report in reports),
        "default_lease_max": settings.WAYPOINT_LEASE_MAX_SECONDS,
        "interrupted": interrupted,
        "site_admin": site_admin,
        "all_projects": Project.objects.all() if site_admin else [],
        "virtual_problem": virtual_device_problem(),
    }
    return render(request, "devices/device_list.html", context)


@login_required
@require_POST
@device_members_only
def device_settings(request: HttpRequest, serial: str) -> HttpResponse:
    """A site admin grants the device to projects, names it and limits its leases."""
    projects = Project.objects.filter(pk__in=request.POST.getlist("projects"))
    minutes = request.POST.get("max_lease_minutes", "").strip()
    try:
        seconds = int(float(minutes) * 60) if minutes else None
    except ValueError:
        messages.error(request, f"Longest lease: give minutes, not {minutes!r}.")
        return redirect("device-list")
    try:
        do_update_device(
            serial,
            request.user,
            projects=projects,
            label=request.POST.get("label", ""),
            max_lease_seconds=seconds,
        )
    except InvalidData as exc:
        messages.error(request, str(exc))
    else:
        messages.info(request, f"Device {serial} saved.")
    return redirect("device-list")


@login_required
@require_POST
@device_members_only
def take_device(request: HttpRequest, serial: str) -> HttpResponse:
    lease = active_lease(serial)
    if lease is not None and lease.holder_id == request.user.pk:
        return redirect("device-console", serial=serial)  # the console's heartbeat renews it
    try:
        _device, server = find_device(serial)
        do_take_device(serial, server, request.user)
    except (LeaseConflict, DeviceUnavailable) as exc:
        messages.error(request, str(exc))
        return redirect("device-list")
    return redirect("device-console", serial=serial)


@login_required
@require_POST
@device_members_only
def release_device(request: HttpRequest, serial: str) -> HttpResponse:
    try:
        do_release_device(serial, request.user, force=request.POST.get("force") == "1")
    except LeaseConflict as exc:
        messages.error(request, str(exc))
    return redirect("device-list")


@login_required
@require_POST
@device_members_only
def heartbeat(request: HttpRequest, serial: str) -> JsonResponse:
    try:
        lease = do_heartbeat(serial, request.user)
    except LeaseConflict as exc:
        return JsonResponse({"detail": str(exc)}, status=409)
    return JsonResponse(
        {"expires_at": lease.expires_at.isoformat(), "notice": final_stretch_notice(lease)}
    )


# ---------------------------------------------------------------------------------- console


def console_context(request: HttpRequest, serial: str, **extra: Any) -> dict[str, Any]:
    lease = active_lease(serial)
    driving = lease is not None and lease.holder_id == request.user.pk
    trajectory = None
    if lease is not None and lease.trajectory_id:
        try:
            trajectory = access_trajectory(request.user, lease.trajectory_id)
        except Http404:  # a watcher outside the project sees the screen only
            trajectory = None
    if trajectory is None and extra.get("trajectory") is not None:
        trajectory = extra.pop("trajectory")
    steps = (
        list(
            Step.objects.filter(trajectory=trajectory)
            .select_related("screen__screenshot")
            .order_by("index")
        )
        if trajectory
        else []
    )
    last_step = steps[-1] if steps else None
    # The step the label form edits: the one picked in the filmstrip, else the latest.
    selected = extra.pop("selected", None)
    selected_step = next((s for s in steps if s.index == selected), last_step)
    context = {
        "serial": serial,
        "lease": lease,
        "driving": driving,
        "trajectory": trajectory,
        "steps": steps,
        "last_step": last_step,
        "selected_step": selected_step,
        "undo_state": undo_state(trajectory) if trajectory else {},
        "memory_targets": MemoryTarget.objects.filter(trajectory=trajectory) if trajectory else [],
        "notes": trajectory.metadata.get("notes", []) if trajectory else [],
    }
    context.update(extra)
    return context


@login_required
@require_GET
@device_members_only
def console(request: HttpRequest, serial: str) -> HttpResponse:
    context = console_context(request, serial)
    packages: list[str] = []
    virtual = False
    try:
        conn = connect(serial)
        virtual = conn.facts.virtual
        facts = conn.facts
        if context["driving"]:
            packages = installed_packages(conn.device)
            if virtual and not context["trajectory"]:
                context["virtual_env"] = read_environment(conn.device, serial)
    except (DeviceUnavailable, *DEVICE_ERRORS) as exc:
        facts = None
        context["device_error"] = str(exc)
    projects = recordable_projects(request.user)
    # A project that hides its gold poses the virtual device's tasks (and resets it to a seed)
    # for its admins only (devices.services.recording.check_may_pose): others are not offered.
    posing = [p for p in projects if can_see_gold(request.user, p)]
    hidden = [p for p in projects if p not in posing]
    tasks = Task.objects.filter(project__in=projects).exclude(
        project__in=hidden, uid__startswith=VIRTUAL_TASK_PREFIX
    )
    context.update(
        {
            "facts": facts,
            "virtual": virtual,
            "packages": packages,
            "projects": projects,
            "posing_projects": posing,
            "gold_hidden_projects": hidden,
            "tasks": tasks.select_related("project"),
            "resumable": Trajectory.objects.filter(
                recorded_by=request.user, status=Status.INTERRUPTED
            ).select_related("task")[:20],
            "lease_seconds": settings.WAYPOINT_LEASE_SECONDS,
            "lease_ends_at_latest": latest_end(context["lease"]) if context["lease"] else None,
            "frame_ms": settings.WAYPOINT_LIVE_FRAME_MS,
        }
    )
    return render(request, "devices/console.html", context)


@login_required
@require_GET
@device_members_only
def frame(request: HttpRequest, serial: str) -> HttpResponse:
    try:
        return frame_response(request, serial)
    except (DeviceUnavailable, *DEVICE_ERRORS) as exc:
        return HttpResponse(str(exc), status=503, content_type="text/plain")


@login_required
@require_GET
@device_members_only
def elements(request: HttpRequest, serial: str) -> JsonResponse:
    """The live screen's UI elements (a fresh dump) for the XML overlay."""
    from trajectories.uixml import parse_ui_xml

    try:
        conn = connect(serial)
        tree = parse_ui_xml(conn.device.dump_hierarchy())
    except (DeviceUnavailable, *DEVICE_ERRORS) as exc:
        return JsonResponse({"detail": str(exc)}, status=503)
    items = [
        {**el.to_target(), "clickable": el.clickable, "depth": el.depth}
        for el in tree.elements
        if el.area > 0
    ]
    return JsonResponse({"width": tree.width, "height": tree.height, "elements": items})


def _panel(request: HttpRequest, serial: str, error: str = "", **extra: Any) -> HttpResponse:
    context = console_context(request, serial, error=error, **extra)
    return render(request, "devices/_recording.html", context)


@login_required
@require_GET
@device_members_only
def recording_panel(request: HttpRequest, serial: str) -> HttpResponse:
    """The recording panel with the step picked in the filmstrip selected for labelling."""
    try:
        selected = int(request.GET.get("step", ""))
    except ValueError:
        selected = None
    return _panel(request, serial, selected=selected)


@login_required
@require_POST
@device_members_only
def start_recording(request: HttpRequest, serial: str) -> HttpResponse:
    try:
        lease = check_driver(serial, request.user)
        if request.POST.get("resume"):
            trajectory = access_trajectory(request.user, request.POST["resume"])
            access_project(request.user, trajectory.project_id, roles=RECORDING_ROLES)
            do_resume_recording(lease, trajectory, request.user)
        else:
            data: dict[str, Any] = {}
            if request.POST.get("task"):
                data["task"] = request.POST["task"]
            else:
                data.update(project=request.POST.get("project"), goal=request.POST.get("goal", ""))
            reset_seed = None
            if request.POST.get("reset"):
                reset_seed = request.POST.get("seed", "")
                if not reset_seed.strip():
                    raise InvalidData("Reset apps to seed: give the seed (a whole number).")
            task = task_to_record(request.user, data)
            do_start_recording(lease, task, request.user, reset_seed=reset_seed)
    except (*RECORDING_ERRORS, *DEVICE_ERRORS) as exc:
        messages.error(request, str(exc))
    return redirect("device-console", serial=serial)


@login_required
@require_POST
@device_members_only
def import_virtual_tasks(request: HttpRequest, serial: str) -> HttpResponse:
    project = access_project(request.user, request.POST.get("project"), roles=RECORDING_ROLES)
    try:
        tasks = do_import_virtual_tasks(project, connect(serial), request.user)
    except AccessDenied as exc:
        messages.error(request, str(exc))
        return redirect("device-console", serial=serial)
    messages.info(request, f"{len(tasks)} tasks of the virtual device are in {project.name}.")
    return redirect("device-console", serial=serial)


def action_from_post(post) -> dict[str, Any]:
    """A canonical action from form fields (numbers as numbers, empty fields left out)."""
    action_type = post.get("type", "")
    action: dict[str, Any] = {"type": action_type}
    required, optional = ACTION_FIELDS.get(action_type, ({}, {}))
    for name, kind in {**required, **optional}.items():
        value = post.get(name)
        if value in (None, ""):
            continue
        if kind == "int":
            try:
                value = int(float(value))
            except ValueError:
                raise InvalidData(f"action.{name}: must be an integer, got {value!r}") from None
        action[name] = value
    return action


def _driven(request: HttpRequest, serial: str) -> Trajectory:
    lease = check_driver(serial, request.user)
    if lease.trajectory_id is None:
        raise RecordingError("Nothing is being recorded on this device; start a trajectory.")
    return access_trajectory(request.user, lease.trajectory_id)


@login_required
@require_POST
@device_members_only
def act(request: HttpRequest, serial: str) -> HttpResponse:
    trajectory = None
    try:
        trajectory = _driven(request, serial)
        action = action_from_post(request.POST)
        if action["type"] in (ActionType.ANSWER, ActionType.TERMINATE):
            raise InvalidData("Use Finish to answer or end the task.")
        # A person's text goes into a focused field, unless they chose "Type anyway".
        require_focus = request.POST.get("type_anyway") != "1"
        step = record_step(trajectory, action, request.user, require_focus=require_focus)
    except DeviceGone as exc:
        return _panel(request, serial, str(exc), trajectory=trajectory, gone=True)
    except NoFocusedField as exc:
        return _panel(request, serial, str(exc), unfocused_text=action["text"])
    except RECORDING_ERRORS as exc:
        return _panel(request, serial, str(exc))
    response = _panel(request, serial)
    # How long the step took, for the browser's devtools and the recording benchmark.
    response["Server-Timing"] = ", ".join(
        f"{name.removesuffix('_ms')};dur={ms}" for name, ms in step.timings.items()
    )
    return response


@login_required
@require_POST
@device_members_only
def finish(request: HttpRequest, serial: str) -> HttpResponse:
    try:
        trajectory = _driven(request, serial)
        status = request.POST.get("status", "success")
        if status not in ("success", "failure"):
            raise InvalidData("status: must be success or failure")
        do_finish_recording(
            trajectory, request.user, status=status, answer=request.POST.get("answer") or None
        )
    except RECORDING_ERRORS as exc:
        return _panel(request, serial, str(exc))
    return _panel(request, serial, finished=trajectory)


@login_required
@require_POST
@device_members_only
def undo(request: HttpRequest, serial: str) -> HttpResponse:
    try:
        step = do_undo_last_step(_driven(request, serial), request.user)
    except RECORDING_ERRORS as exc:
        return _panel(request, serial, str(exc))
    return _panel(
        request,
        serial,
        notice=f"Step {step.index} ({step.action_type}) is no longer recorded. "
        "The device was not undone: it still shows what that action did.",
    )


def posted_version(request: HttpRequest) -> int | None:
    """The trajectory version the console showed when the form was sent (None: not sent)."""
    try:
        return int(request.POST.get("version", ""))
    except ValueError:
        return None


@login_required
@require_POST
@device_members_only
def note(request: HttpRequest, serial: str) -> HttpResponse:
    try:
        do_add_note(
            _driven(request, serial),
            request.user,
            posted_version(request),
            request.POST.get("text", ""),
        )
    except RECORDING_ERRORS as exc:
        return _panel(request, serial, str(exc))
    return _panel(request, serial)


@login_required
@require_POST
@device_members_only
def memory_target(request: HttpRequest, serial: str) -> HttpResponse:
    try:
        trajectory = _driven(request, serial)
        try:
            bounds = [int(float(v)) for v in request.POST.get("bounds", "").split(",")]
        except ValueError:
            raise InvalidData("bounds: must be four integers x1,y1,x2,y2") from None
        do_mark_memory_target(
            trajectory,
            request.user,
            posted_version(request),
            key=request.POST.get("key", ""),
            value=request.POST.get("value", ""),
            bounds=bounds,
            source=request.POST.get("source", "box"),
        )
    except RECORDING_ERRORS as exc:
        return _panel(request, serial, str(exc))
    return _panel(request, serial)


@login_required
@require_POST
@device_members_only
def memory_target_edit(request: HttpRequest, serial: str, target_id: int) -> HttpResponse:
    """Change (or, with ``delete``, remove) a memory target marked during this recording."""
    try:
        trajectory = _driven(request, serial)
        if request.POST.get("delete"):
            do_delete_recorded_memory_target(
                trajectory, request.user, posted_version(request), target_id
            )
        else:
            do_edit_memory_target(
                trajectory,
                request.user,
                posted_version(request),
                target_id,
                key=request.POST.get("key", ""),
                value=request.POST.get("value", ""),
            )
    except RECORDING_ERRORS as exc:
        return _panel(request, serial, str(exc))
    return _panel(request, serial)


@login_required
@require_POST
@device_members_only
def step_labels(request: HttpRequest, serial: str, index: int) -> HttpResponse:
    try:
        trajectory = _driven(request, serial)
        if not Step.objects.filter(trajectory=trajectory, index=index).exists():
            return _panel(request, serial, f"No step {index}.")
        do_update_step_labels(
            trajectory,
            request.user,
            posted_version(request),
            index,
            thought=request.POST.get("thought", ""),
            summary=request.POST.get("summary", ""),
            memory=request.POST.get("memory", ""),
            trainable=request.POST.get("trainable") == "on",
        )
    except RECORDING_ERRORS as exc:  # the form stays on the step it was editing
        return _panel(request, serial, str(exc), selected=index)
    return _panel(request, serial, selected=index)


@login_required
@require_POST
@device_members_only
def undo_labels(request: HttpRequest, serial: str) -> HttpResponse:
    """Undo the last label edit (a step's labels, a memory target, a note), as the workspace's
    undo does: a new versioned, audited edit."""
    selected = None
    try:
        trajectory = _driven(request, serial)
        part = next_undo_part(trajectory) or ""
        selected = int(part.removeprefix("step:")) if part.startswith("step:") else None
        if not do_undo(trajectory, request.user, posted_version(request), statuses=RECORDING):
            return _panel(request, serial, "There is no label edit to undo.")
    except RECORDING_ERRORS as exc:
        return _panel(request, serial, str(exc))
    return _panel(request, serial, selected=selected, notice="The last label edit is undone.")


# ------------------------------------------------------------------------------- thumbnails


@login_required
@require_GET
def thumbnail(request: HttpRequest, sha256: str) -> HttpResponse:
    """A small WebP of a screenshot for the filmstrip, made once and kept in blob storage.

    An image that cannot be decoded answers 422 with a placeholder picture, not an error page.
    """
    blob = access_blob(request.user, sha256)

    def respond() -> HttpResponse:
        name = f"thumbs/{blob.sha256[:2]}/{blob.sha256}-{THUMB_WIDTH}.webp"
        if not default_storage.exists(name):
            thumb = make_thumbnail(read_blob(blob), THUMB_WIDTH, f"screenshot {blob.sha256}")
            if not default_storage.exists(name):
                default_storage.save(name, ContentFile(thumb))
        return FileResponse(default_storage.open(name, "rb"), content_type="image/webp")

    try:
        return immutable_response(request, f"thumb-{blob.sha256}", respond)
    except InvalidData:
        # Not cached: the image may become readable (a newer decoder, a repaired blob).
        return render(
            request, "devices/unreadable_image.svg", content_type="image/svg+xml", status=422
        )

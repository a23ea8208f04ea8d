"""HTML pages: the annotation workspace, the review queue, assignment and agreement.

Workspace edits are htmx POSTs to one view, ``workspace_edit``, naming an operation. Field
edits (autosaved text) answer with out-of-band fragments only (track, status, problems,
history), so the field being typed in keeps its focus; structural edits re-render the panels.
A stale version answers 409 with the message and the newer version in place.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from trajectories.access import access_project, role_in, trajectories_of
from trajectories.labels import edits, protocol
from trajectories.labels.cache import kept_at_version
from trajectories.models import Role, Trajectory
from trajectories.validation import InvalidData

from . import services as s
from .agreement import project_agreement
from .models import Assignment, Proposal, ProposalStatus, ReviewComment
from .permissions import (
    EDIT,
    RESOLVE,
    REVIEW,
    access_assignments,
    access_labels,
    access_workspace_page,
)
from .progress import project_progress
from .proposal_figures import proposal_figures
from .proposers import DEFAULT_PROPOSER, PROPOSERS
from .queues import inbox_of, review_queue_of, work_of
from .services.proposals import EDITABLE_FIELDS, Acceptance
from .workspace import (
    describe_edit,
    labels_context,
    page_steps,
    proposal_panel_context,
    step_context,
)

# ---------------------------------------------------------------- form parsing


def _int(post, name: str, *, optional: bool = False) -> int | None:
    raw = post.get(name, "").strip()
    if raw == "" and optional:
        return None
    try:
        return int(raw)
    except ValueError:
        raise InvalidData(f"{name}: must be a step number, got {raw!r}") from None


def _steps(post, name: str) -> list[int]:
    raw = post.get(name, "").replace(",", " ").split()
    try:
        return [int(x) for x in raw]
    except ValueError:
        raise InvalidData(f"{name}: list step numbers, e.g. 4, 7") from None


def _evidence(post, name: str = "evidence") -> dict[str, Any] | None:
    raw = post.get(name, "").strip()
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        raise InvalidData(f"{name}: not valid JSON") from None


def _given(post, names: tuple[str, ...]) -> dict[str, str]:
    return {n: post[n] for n in names if n in post}


# ---------------------------------------------------------------- operations

# name -> (permission, structural?, run(request, trajectory, version, post))
Operation = tuple[str, bool, Callable[[HttpRequest, Trajectory, int, Any], Any]]


def _subgoal_fields(post) -> dict[str, str]:
    return _given(post, ("text", "effect", "behaviour", "success"))


def _step_fields(post) -> dict[str, Any]:
    fields: dict[str, Any] = _given(post, ("thought", "summary", "memory"))
    if "trainable_present" in post:
        fields["trainable"] = post.get("trainable") == "on"
    return fields


def _memory_update(r, t, v, post):
    fields: dict[str, Any] = _given(post, ("key", "value"))
    if "retrieve_steps" in post:
        fields["retrieve_steps"] = _steps(post, "retrieve_steps")
    if post.get("evidence"):
        fields["evidence"] = _evidence(post)
    return edits.do_update_memory_target(t, r.user, v, post.get("target"), fields)


def _memory_toggle(r, t, v, post):
    target = t.memory_targets.filter(pk=_int(post, "target")).first()
    if target is None:
        raise InvalidData("that memory target is gone")
    step = _int(post, "step")
    steps = set(target.retrieve_steps) ^ {step}
    return edits.do_update_memory_target(t, r.user, v, target.pk, {"retrieve_steps": sorted(steps)})


def _anchor_update(r, t, v, post):
    fields: dict[str, Any] = _given(post, ("type", "content", "description"))
    if post.get("evidence"):
        fields["evidence"] = _evidence(post)
    return edits.do_update_anchor(t, r.user, v, post.get("key"), fields)


def _review(r, t, v, post):
    text = post.get("comment", "").strip()
    comments = [{"step": _int(post, "step", optional=True), "text": text}] if text else []
    return s.do_review(t, r.user, v, post.get("decision"), comments)


def _resolve(request, trajectory, version, post):
    """The workspace's resolve / reopen button on one comment."""
    comment = s.access_comment(trajectory, post.get("comment"))
    s.do_resolve_comment(comment, request.user, post.get("resolved", "1") != "0")


def _proposal(t: Trajectory, post) -> Proposal:
    try:
        proposal = Proposal.objects.get(trajectory=t, pk=int(post.get("proposal", "")))
    except (Proposal.DoesNotExist, ValueError):
        given = post.get("proposal")
        raise InvalidData(f"proposal {given!r} is not a proposal of this trajectory") from None
    proposal.trajectory = t  # the edit bumps the version of the one the page is rendered from
    return proposal


def _items(post) -> str | list[str]:
    items = post.get("items", "")
    return "all" if items == "all" else [items]


def _proposal_accept(r, t, v, post):
    """Accept one proposed item (with the panel's field, changed or not) or all of them."""
    proposal = _proposal(t, post)
    items = _items(post)
    edited = {}
    if items != "all":
        part, _, index = items[0].partition(":")
        proposed = proposal.payload.get(part, [])
        item = proposed[int(index)] if index.isdigit() and int(index) < len(proposed) else {}
        # Only the item's editable fields: the rest of the post (the step the page is on,
        # the version) names where the annotator is, not what they changed.
        fields = EDITABLE_FIELDS.get(part, ())
        edited = {k: post[k] for k in fields if k in post and k in item and post[k] != item[k]}
    return s.do_accept(proposal, r.user, v, items, edited)


OPERATIONS: dict[str, Operation] = {
    "split": (
        EDIT,
        True,
        lambda r, t, v, p: edits.do_split_subgoal(t, r.user, v, _int(p, "at")),
    ),
    "merge": (
        EDIT,
        True,
        lambda r, t, v, p: edits.do_merge_subgoals(t, r.user, v, p.get("subgoal")),
    ),
    "delete_subgoal": (
        EDIT,
        True,
        lambda r, t, v, p: edits.do_delete_subgoal(t, r.user, v, p.get("subgoal")),
    ),
    "boundary": (
        EDIT,
        True,
        lambda r, t, v, p: edits.do_move_boundary(
            t,
            r.user,
            v,
            p.get("subgoal"),
            start=_int(p, "start", optional=True),
            end=_int(p, "end", optional=True),
            shared=p.get("shared") == "1",
        ),
    ),
    "subgoal": (
        EDIT,
        False,
        lambda r, t, v, p: edits.do_update_subgoal(
            t, r.user, v, p.get("subgoal"), _subgoal_fields(p)
        ),
    ),
    "step": (
        EDIT,
        False,
        lambda r, t, v, p: edits.do_update_step(t, r.user, v, _int(p, "step"), _step_fields(p)),
    ),
    "memory_add": (
        EDIT,
        True,
        lambda r, t, v, p: edits.do_add_memory_target(
            t,
            r.user,
            v,
            key=p.get("key", ""),
            value=p.get("value", ""),
            encode_step=_int(p, "step"),
            retrieve_steps=_steps(p, "retrieve_steps"),
            evidence=_evidence(p),
        ),
    ),
    "memory_update": (EDIT, False, _memory_update),
    "memory_toggle": (EDIT, True, _memory_toggle),
    "memory_delete": (
        EDIT,
        True,
        lambda r, t, v, p: edits.do_delete_memory_target(t, r.user, v, p.get("target")),
    ),
    "anchor_add": (
        EDIT,
        True,
        lambda r, t, v, p: edits.do_add_anchor(
            t,
            r.user,
            v,
            step=_int(p, "step"),
            type=p.get("type"),
            content=p.get("content", ""),
            description=p.get("description", ""),
            evidence=_evidence(p),
        ),
    ),
    "anchor_update": (EDIT, False, _anchor_update),
    "anchor_delete": (
        EDIT,
        True,
        lambda r, t, v, p: edits.do_delete_anchor(t, r.user, v, p.get("key")),
    ),
    "link_add": (
        EDIT,
        True,
        lambda r, t, v, p: edits.do_add_anchor_link(
            t,
            r.user,
            v,
            source=p.get("source"),
            target=p.get("target"),
            relation=p.get("relation"),
            critical=p.get("critical") == "on",
        ),
    ),
    "link_delete": (
        EDIT,
        True,
        lambda r, t, v, p: edits.do_delete_anchor_link(t, r.user, v, p.get("link")),
    ),
    "revert": (EDIT, True, lambda r, t, v, p: protocol.do_revert(t, r.user, v, p.get("event"))),
    "undo": (EDIT, True, lambda r, t, v, p: protocol.do_undo(t, r.user, v)),
    "redo": (EDIT, True, lambda r, t, v, p: protocol.do_redo(t, r.user, v)),
    "submit": (EDIT, True, lambda r, t, v, p: s.do_submit(t, r.user, v)),
    "comment": (
        REVIEW,
        True,
        lambda r, t, v, p: s.do_comment(
            t, r.user, _int(p, "step", optional=True), p.get("comment", "")
        ),
    ),
    "review": (REVIEW, True, _review),
    "comment_resolve": (RESOLVE, True, _resolve),
    "propose": (
        EDIT,
        True,
        lambda r, t, v, p: s.do_start_proposals(t.project, r.user, {"trajectories": [str(t.uid)]}),
    ),
    "proposal_accept": (EDIT, True, _proposal_accept),
    "proposal_reject": (
        EDIT,
        True,
        lambda r, t, v, p: s.do_reject(_proposal(t, p), r.user, _items(p)),
    ),
}


# ---------------------------------------------------------------- the workspace


def _selected(request: HttpRequest, trajectory: Trajectory) -> int:
    source = request.POST if request.method == "POST" else request.GET
    try:
        index = int(source.get("step", 0))
    except ValueError:
        index = 0
    return min(max(index, 0), max(trajectory.step_count - 1, 0))


def _context(request, trajectory, role, index, *, filmstrip=False, **extra) -> dict[str, Any]:
    """The workspace's context; ``filmstrip``: with every step, for the whole page."""
    kept = kept_at_version(trajectory, "labels", "steps")
    steps = page_steps(kept["steps"])
    context = labels_context(trajectory, index, request.user, role, kept["labels"])
    context.update(step_context(trajectory, index, context, steps))
    context.update(project=trajectory.project, **extra)
    if filmstrip:
        context["steps"] = steps
    return context


def _render(request, trajectory, role, index, template, *, status=200, **extra) -> HttpResponse:
    context = _context(request, trajectory, role, index, **extra)
    return render(request, template, context, status=status)


@login_required
@require_GET
def workspace(request: HttpRequest, trajectory_id: int) -> HttpResponse:
    trajectory, role = access_workspace_page(request.user, trajectory_id)
    index = _selected(request, trajectory)
    if request.htmx and not request.htmx.history_restore_request:
        response = _render(request, trajectory, role, index, "annotate/_main.html")
    else:
        # With the filmstrip's steps; the selected one is among them, with its XML.
        context = _context(request, trajectory, role, index, filmstrip=True, task=trajectory.task)
        # The page is drawn by Jinja2 (annotate/jinja2/), inside the site's frame: a Django
        # template, as every other page has.
        page = render_to_string("annotate/_workspace.html", context, request)
        frame = {"task": trajectory.task, "project": trajectory.project, "page": page}
        response = render(request, "annotate/workspace.html", frame)
    response["Vary"] = "HX-Request"
    return response


@login_required
@require_GET
def workspace_proposals(request: HttpRequest, trajectory_id: int) -> HttpResponse:
    """The proposals panel and the proposed track, for the panel to poll while a proposal is
    being made: it stops once the proposal is there (or failed)."""
    trajectory, role = access_workspace_page(request.user, trajectory_id)
    index = _selected(request, trajectory)
    context = proposal_panel_context(trajectory, index, request.user, role)
    return render(request, "annotate/_proposals_update.html", context)


@login_required
@require_POST
def workspace_edit(request: HttpRequest, trajectory_id: int, op: str) -> HttpResponse:
    if op not in OPERATIONS:
        # JSON, never HTML: the name is the requester's text (issue 9, item 14).
        return JsonResponse({"detail": f"No such operation: {op}"}, status=404)
    permission, structural, run = OPERATIONS[op]
    trajectory, role = access_labels(request.user, trajectory_id, permission)
    index = _selected(request, trajectory)
    try:
        version = int(request.POST.get("version", ""))
    except ValueError:
        version = None
    try:
        done = run(request, trajectory, version, request.POST)
    except protocol.StaleVersion as exc:
        trajectory.refresh_from_db()
        return _render(
            request,
            trajectory,
            role,
            index,
            "annotate/_response.html",
            status=409,
            flash=str(exc),
            structural=True,
            main_oob=True,
            tried=describe_edit(trajectory, op, request.POST),
        )
    except InvalidData as exc:
        return render(request, "annotate/_flash.html", {"flash": str(exc)}, status=400)
    return _render(
        request,
        trajectory,
        role,
        index,
        "annotate/_response.html",
        structural=structural,
        main_oob=False,
        # "accept all" says what it left pending, and why
        acceptance=done if isinstance(done, Acceptance) and done.skipped else None,
    )


# ---------------------------------------------------------------- review queue and my work


@login_required
@require_GET
def review_queue(request: HttpRequest) -> HttpResponse:
    user = request.user
    waiting = (
        Proposal.objects.filter(trajectory__in=trajectories_of(user), status=ProposalStatus.PENDING)
        .exclude(payload={})
        .select_related("trajectory__task", "trajectory__project")
        .order_by("created_at")
    )
    context = {
        "to_review": review_queue_of(user),
        "mine": work_of(user),
        "proposals_waiting": waiting,
    }
    return render(request, "annotate/review_queue.html", context)


@login_required
@require_GET
def inbox(request: HttpRequest) -> HttpResponse:
    """Work a reviewer sent back to the user, with the comments to address."""
    return render(request, "annotate/inbox.html", {"sent_back": inbox_of(request.user)})


@login_required
@require_POST
def resolve_comment(request: HttpRequest, comment_id: int) -> HttpResponse:
    """Resolve (or reopen) one review comment from the inbox; back to where it was pressed."""
    trajectory_id = (
        ReviewComment.objects.filter(pk=comment_id).values_list("trajectory_id", flat=True).first()
    )
    if trajectory_id is None:
        raise Http404("No such comment")
    trajectory, _ = access_labels(request.user, trajectory_id, RESOLVE)
    comment = s.access_comment(trajectory, comment_id)
    s.do_resolve_comment(comment, request.user, request.POST.get("resolved", "1") != "0")
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("annotate-inbox")
    return redirect(target)


# ---------------------------------------------------------------- assignment


@login_required
def assignments(request: HttpRequest, project_id: int) -> HttpResponse:
    project = access_assignments(request.user, project_id)
    annotators = list(
        get_user_model()
        .objects.filter(
            memberships__project=project, memberships__role__in=(Role.ANNOTATOR, Role.ADMIN)
        )
        .order_by("username")
    )
    error = None
    if request.method == "POST":
        chosen = [a for a in annotators if str(a.pk) in request.POST.getlist("annotators")]
        picked = list(project.trajectories.filter(pk__in=request.POST.getlist("trajectories")))
        try:
            if not picked:
                raise InvalidData("trajectories: tick at least one")
            if not chosen:
                raise InvalidData("annotators: tick at least one")
            per = 2 if request.POST.get("per_trajectory") == "2" else 1
            if request.POST.get("mode") == "each" and per == 1:
                for t in picked:
                    for a in chosen:
                        s.do_assign(t, a, request.user)
            else:
                s.do_spread_assignments(project, picked, chosen, request.user, per)
        except InvalidData as exc:
            error = str(exc)
        else:
            return redirect("annotate-assignments", project.pk)
    trajectories = (
        project.trajectories.select_related("task", "copy_of")
        .prefetch_related("assignments__annotator")
        .annotate(copy_count=Count("copies"))
        .order_by("copy_of_id", "-created_at", "-id")
    )
    load = dict(
        Assignment.objects.filter(trajectory__project=project)
        .values("annotator__username")
        .annotate(n=Count("id"))
        .values_list("annotator__username", "n")
    )
    for a in annotators:
        a.load = load.get(a.username, 0)
    return render(
        request,
        "annotate/assignments.html",
        {
            "project": project,
            "trajectories": trajectories,
            "annotators": annotators,
            "load": load,
            "error": error,
        },
    )


@login_required
@require_POST
def unassign(request: HttpRequest, project_id: int, assignment_id: int) -> HttpResponse:
    project = access_assignments(request.user, project_id)
    found = Assignment.objects.filter(pk=assignment_id, trajectory__project=project).first()
    if found is not None:
        s.do_unassign(found.trajectory, found.annotator, request.user)
    return redirect("annotate-assignments", project.pk)


# ---------------------------------------------------------------- agreement


@login_required
@require_GET
def agreement(request: HttpRequest, project_id: int) -> HttpResponse:
    project = access_project(request.user, project_id)
    try:
        k = min(max(int(request.GET.get("k", 1)), 0), 20)
    except ValueError:
        k = 1
    result = project_agreement(project, k)
    return render(
        request,
        "annotate/agreement.html",
        {"project": project, "result": result, "k": k, "ks": range(0, 6)},
    )


# ---------------------------------------------------------------- progress


@login_required
@require_GET
def progress(request: HttpRequest, project_id: int) -> HttpResponse:
    """Where the project stands: statuses, shares annotated and approved, work per person."""
    project = access_project(request.user, project_id)
    context = {
        "project": project,
        "progress": project_progress(project),
        "gap_minutes": round(settings.WAYPOINT_SESSION_GAP_S / 60),
    }
    return render(request, "annotate/progress.html", context)


# ---------------------------------------------------------------- proposals


@login_required
def proposals(request: HttpRequest, project_id: int) -> HttpResponse:
    """How each proposer's proposals fared; admins ask for proposals on a selection or all."""
    project = access_project(request.user, project_id)
    is_admin = request.user.is_superuser or role_in(project, request.user) == Role.ADMIN
    context: dict[str, Any] = {"project": project, "is_admin": is_admin, "proposers": PROPOSERS}
    status = 200
    if request.method == "POST":
        access_project(request.user, project_id, roles=(Role.ADMIN,))
        try:
            context["job"] = s.do_start_proposals(
                project,
                request.user,
                {"trajectories": request.POST.get("trajectories", "")},
                request.POST.get("proposer", DEFAULT_PROPOSER),
            )
        except InvalidData as exc:
            context["flash"], status = str(exc), 400
    context["figures"] = proposal_figures(project)
    return render(request, "annotate/proposals.html", context, status=status)

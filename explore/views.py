"""Pages: the project's explorations with a form to start one, and one exploration's live
progress (states, transitions, frontier size), with stop and resume."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from devices.models import Device
from trajectories.access import access_project
from trajectories.models import Project
from trajectories.validation import InvalidData
from trajectories.views import JOB_ROLES

from .access import access_exploration, check_allow, may_allow
from .models import Exploration, Strategy
from .services import do_resume_exploration, do_start_exploration, do_stop_exploration

SHOWN = 50
EDGES_SHOWN = 200


NO_DEVICE = "The project has no device yet: an admin grants one on the Devices page"


class StartForm(forms.Form):
    app = forms.CharField(help_text="The app's package, e.g. com.waypoint.mailbox")
    device = forms.ChoiceField(help_text="One of the project's devices")
    budget = forms.CharField(initial="150", help_text="Steps (150) or minutes (30min)")
    strategy = forms.ChoiceField(choices=Strategy.choices, initial=Strategy.DFS)
    seed = forms.IntegerField(initial=0, min_value=0)
    allow = forms.CharField(
        required=False, help_text="Deny-list entries to allow, by commas (project admins only)"
    )

    def __init__(self, *args: Any, project: Project, may_allow: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not may_allow:  # only admins override the deny-lists (check_allow)
            del self.fields["allow"]
        devices = Device.objects.filter(projects=project)
        self.fields["device"].choices = [
            (d.serial, f"{d.label} ({d.serial})" if d.label else d.serial) for d in devices
        ]
        if not self.fields["device"].choices:
            self.fields["device"].help_text = NO_DEVICE


@login_required
@require_http_methods(["GET", "POST"])
def project_explorations(request: HttpRequest, project_id: int) -> HttpResponse:
    project = access_project(request.user, project_id)
    form = StartForm(
        request.POST or None, project=project, may_allow=may_allow(request.user, project)
    )
    if request.method == "POST":
        access_project(request.user, project_id, roles=JOB_ROLES)
        check_allow(request.user, project, request.POST.get("allow", ""))
        if form.is_valid():
            data = form.cleaned_data
            try:
                x = do_start_exploration(
                    project,
                    request.user,
                    app=data["app"],
                    serial=data["device"],
                    budget=data["budget"],
                    strategy=data["strategy"],
                    seed=data["seed"],
                    allow=data.get("allow", ""),
                )
            except InvalidData as exc:
                form.add_error(None, str(exc))
            else:
                return redirect("exploration-detail", x.pk)
    explorations = Exploration.objects.filter(project=project).select_related("graph")[:SHOWN]
    context = {"project": project, "form": form, "explorations": explorations}
    return render(request, "explore/explorations.html", context)


@login_required
@require_GET
def exploration_detail(request: HttpRequest, exploration_id: int) -> HttpResponse:
    x = access_exploration(request.user, exploration_id)
    frontier = x.frontier or {}
    nodes = [n for n in frontier.get("nodes", []) if not n["id"].startswith("x:")]
    context = {
        "project": x.project,
        "x": x,
        "nodes": [
            {
                **n,
                "todo": sum(1 for c in n["candidates"] if c["status"] == "todo"),
                "refused": [c["label"] for c in n["candidates"] if c["status"] == "refused"],
            }
            for n in nodes
        ],
        "edges": frontier.get("edges", [])[-EDGES_SHOWN:],
    }
    template = "explore/_live.html" if request.htmx else "explore/exploration.html"
    response = render(request, template, context)
    patch_vary_headers(response, ("HX-Request",))
    return response


@login_required
@require_POST
def exploration_stop(request: HttpRequest, exploration_id: int) -> HttpResponse:
    x = access_exploration(request.user, exploration_id)
    access_project(request.user, x.project_id, roles=JOB_ROLES)
    try:
        do_stop_exploration(x, request.user)
    except InvalidData:
        pass  # it ended meanwhile: the page shows how
    return redirect("exploration-detail", x.pk)


@login_required
@require_POST
def exploration_resume(request: HttpRequest, exploration_id: int) -> HttpResponse:
    x = access_exploration(request.user, exploration_id)
    access_project(request.user, x.project_id, roles=JOB_ROLES)
    try:
        do_resume_exploration(x, request.user)
    except InvalidData:
        pass
    return redirect("exploration-detail", x.pk)

"""HTML pages of agent runs: start a run, runs side by side with the task x run matrix (each
cell opens its episode's trajectory), one run's episodes, and two runs compared."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from trajectories.access import access_project
from trajectories.models import Project
from trajectories.validation import InvalidData
from trajectories.views import JOB_ROLES

from .access import access_run, access_suite
from .calibration import calibration, suite_summary
from .endpoints import endpoint_row, endpoints_for
from .models import Run, Suite
from .pool import project_devices
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
from .services import MAX_ATTEMPTS, MAX_STEPS, do_calibrate_suite, do_start_run, suite_named

RUNS_SHOWN = 50
SUITES_SHOWN = 20
MATRIX_RUNS = 8


class StartRunForm(forms.Form):
    agent = forms.CharField(
        initial="solver",
        help_text="solver, random, replay, the controls window and window+memory (the solver "
        "seeing only its last K screens, without and with its memory field: what a memory "
        "benchmark's scores are read against), or openai:mobile_use (androtmem-v1, -v2, -v3), "
        "with options such as ,endpoint=NAME ,model=NAME ,graph=V ,xml=1",
    )
    suite = forms.ChoiceField(required=False)
    tasks = forms.CharField(
        required=False,
        label="or task templates",
        help_text="Template ids, separated by commas, or memory (the long memory templates), "
        "short, all, app:SLUG.",
    )
    seeds = forms.CharField(initial="1..3", required=False, help_text="e.g. 1..5 or 1,4,9")
    levels = forms.CharField(
        required=False,
        help_text="e.g. 1,2,3 (empty: a suite's every level, or 3 for task templates)",
        widget=forms.TextInput(attrs={"placeholder": "3", "size": 6}),
    )
    attempts = forms.IntegerField(initial=1, min_value=1, max_value=MAX_ATTEMPTS)
    max_steps = forms.IntegerField(
        label="Step cap",
        required=False,
        min_value=1,
        max_value=MAX_STEPS,
        help_text="Empty: each task's own budget (the long memory tasks need more than "
        f"{settings.WAYPOINT_AGENT_MAX_STEPS}, the others' default).",
        widget=forms.NumberInput(attrs={"placeholder": "own", "size": 4}),
    )
    devices = forms.MultipleChoiceField(
        required=False,
        widget=forms.SelectMultiple(attrs={"size": 3}),
        help_text="None chosen: every connected device of the project.",
    )

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.project = project
        suites = Suite.objects.filter(project=project).order_by("name", "-created_at")
        self.fields["suite"].choices = [("", "— task templates instead —")] + [
            (f"{s.name}@{s.version}", f"{s.name} v{s.version} ({len(s.instances)} instances)")
            for s in suites
        ]
        self.fields["devices"].choices = [
            (d["serial"], d["serial"]) for d in project_devices(project)
        ]

    def start(self, user) -> Run:
        data = self.cleaned_data
        tasks = [t.strip() for t in data["tasks"].split(",") if t.strip()]
        return do_start_run(
            self.project,
            user,
            agent=data["agent"],
            suite=suite_named(self.project, data["suite"]) if data["suite"] else None,
            tasks=tasks or None,
            seeds=data["seeds"] or None,
            levels=data["levels"] or None,
            attempts=data["attempts"],
            max_steps=data["max_steps"],
            devices=data["devices"] or None,
        )


@login_required
@require_http_methods(["GET", "POST"])
def project_runs(request: HttpRequest, project_id: int) -> HttpResponse:
    project = access_project(request.user, project_id)
    form = StartRunForm(request.POST or None, project=project, initial={})
    if request.method == "POST":
        access_project(request.user, project_id, roles=JOB_ROLES)
        if form.is_valid():
            try:
                run = form.start(request.user)
            except InvalidData as exc:
                form.add_error(None, str(exc))
            else:
                return redirect("run-detail", run.pk)
    runs = list(runs_of(project)[:RUNS_SHOWN])
    picked = (
        picked_runs(project, request.GET.getlist("runs"), MATRIX_RUNS)
        if request.GET.getlist("runs")
        else []
    )
    suites = Suite.objects.filter(project=project).order_by("name", "-created_at")[:SUITES_SHOWN]
    context = {
        "project": project,
        "form": form,
        "suites": [{**suite_summary(s), "calibration": calibration(s)} for s in suites],
        "runs": summaries(runs),
        "picked": {run.pk for run in picked},
        "matrix": matrix(picked) if picked else None,
        "endpoints": [endpoint_row(e) for e in endpoints_for(project)],
    }
    return render(request, "agents/runs.html", context)


@login_required
@require_POST
def calibrate_suite(request: HttpRequest, project_id: int, name: str, version: str) -> HttpResponse:
    """Start the suite's four control runs (solver, window+memory, window, random)."""
    project = access_project(request.user, project_id, roles=JOB_ROLES)
    suite = access_suite(request.user, project.pk, name, version)
    try:
        started = do_calibrate_suite(project, request.user, suite)
    except InvalidData as exc:
        messages.error(request, f"Could not calibrate {suite}: {exc}")
    else:
        messages.success(
            request,
            f"Calibrating {suite}: runs {', '.join(f'#{run.pk}' for run in started)} queued.",
        )
    return redirect(reverse("project-runs", args=[project.pk]) + "#suites")


@login_required
@require_GET
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = access_run(request.user, run_id)
    rows = episode_rows([run])[run.pk]
    context = {
        "project": run.project,
        "run": run,
        "summary": summarize(run, rows),
        "episodes": rows,
    }
    if request.htmx and not request.htmx.history_restore_request:
        response = render(request, "agents/_run_live.html", context)
    else:
        response = render(request, "agents/run_detail.html", context)
    patch_vary_headers(response, ("HX-Request",))
    return response


@login_required
@require_GET
def runs_compare(request: HttpRequest, project_id: int) -> HttpResponse:
    project = access_project(request.user, project_id)
    compared = compare(*two_runs(project, request.GET.getlist("runs")))
    context = {
        "project": project,
        "compared": compared,
        "pair": [compared["a"], compared["b"]],
        "sections": [("Now solved", compared["fixed"]), ("Now failed", compared["broken"])],
    }
    return render(request, "agents/compare.html", context)

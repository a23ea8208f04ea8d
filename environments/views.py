"""Pages: the project's generations of environments with a form to start one; a generation's
progress, report and environments (each verified one installed, each failed one with its stage
and reason); the gallery of the verified apps' first screens."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_http_methods

from devices.models import Device
from trajectories.access import access_project
from trajectories.models import Project, Step
from trajectories.validation import InvalidData
from trajectories.views import JOB_ROLES

from .access import access_generation
from .models import EnvironmentStatus, Generation, GeneratorKind
from .procedural import DOMAIN_NAMES
from .report import generation_report
from .services import do_start_generation

SHOWN = 50
GALLERY = 120


class StartForm(forms.Form):
    count = forms.IntegerField(initial=20, min_value=1, help_text="Verified environments wanted")
    seed = forms.IntegerField(initial=0, min_value=0)
    generator = forms.ChoiceField(choices=GeneratorKind.choices, initial=GeneratorKind.PROCEDURAL)
    domains = forms.CharField(
        required=False, help_text="Comma-separated, empty for all: " + ", ".join(DOMAIN_NAMES)
    )
    devices = forms.MultipleChoiceField(
        required=False, help_text="The devices that verify them (none: every connected one)"
    )

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["devices"].choices = [
            (d.serial, d.label or d.serial) for d in Device.objects.filter(projects=project)
        ]


@login_required
@require_http_methods(["GET", "POST"])
def project_generations(request: HttpRequest, project_id: int) -> HttpResponse:
    project = access_project(request.user, project_id)
    form = StartForm(request.POST or None, project=project)
    if request.method == "POST":
        access_project(request.user, project_id, roles=JOB_ROLES)
        if form.is_valid():
            data = form.cleaned_data
            try:
                generation = do_start_generation(
                    project,
                    request.user,
                    count=data["count"],
                    seed=data["seed"],
                    generator=data["generator"],
                    domains=data["domains"],
                    devices=data["devices"] or None,
                )
            except InvalidData as exc:
                form.add_error(None, str(exc))
            else:
                return redirect("generation-detail", generation.pk)
    generations = Generation.objects.filter(project=project).select_related("job")[:SHOWN]
    context = {"project": project, "form": form, "generations": generations}
    return render(request, "environments/generations.html", context)


@login_required
@require_GET
def generation_detail(request: HttpRequest, generation_id: int) -> HttpResponse:
    generation = access_generation(request.user, generation_id)
    environments = generation.environments.order_by("index")
    context = {
        "project": generation.project,
        "generation": generation,
        "job": generation.job,
        "report": generation_report(generation),
        "environments": environments,
    }
    template = "environments/_progress.html" if request.htmx else "environments/generation.html"
    response = render(request, template, context)
    patch_vary_headers(response, ("HX-Request",))
    return response


@login_required
@require_GET
def generation_gallery(request: HttpRequest, generation_id: int) -> HttpResponse:
    """Each verified app's first screen: the screen its verified run saw once it was open."""
    generation = access_generation(request.user, generation_id)
    verified = list(
        generation.environments.filter(status=EnvironmentStatus.VERIFIED)
        .order_by("index")
        .values("index", "slug", "label", "domain", "report", "trajectory_id")[:GALLERY]
    )
    first = {
        trajectory_id: sha
        for trajectory_id, sha in Step.objects.filter(
            trajectory_id__in=[v["trajectory_id"] for v in verified], index=1
        ).values_list("trajectory_id", "screen__screenshot_id")
    }
    tiles = [
        {
            **v,
            "screenshot": first.get(v["trajectory_id"]),
            "style": (v["report"] or {}).get("style") or {},
            "memory_type": (v["report"] or {}).get("memory_type", ""),
        }
        for v in verified
    ]
    context = {"project": generation.project, "generation": generation, "tiles": tiles}
    return render(request, "environments/gallery.html", context)

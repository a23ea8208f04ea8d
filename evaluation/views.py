"""The evaluator page: pick a benchmark export, upload predictions, see the scores and charts."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from trajectories.access import access_project
from trajectories.validation import InvalidData
from trajectories.views import JOB_ROLES

from .service import benchmark_jobs, do_evaluate


class EvaluateForm(forms.Form):
    export_job = forms.ChoiceField(label="Benchmark (an androtmem export)", required=False)
    benchmark = forms.FileField(
        required=False,
        label="or a benchmark file",
        help_text="An androtmem export (.zip) or AndroTMem ground truth (.jsonl).",
    )
    predictions = forms.FileField(
        help_text="JSONL, one predicted step a line: AndroTMem's layout or GUI-Owl raw output."
    )
    split = forms.CharField(required=False, help_text="Only this split (empty: every split).")

    def __init__(self, *args, project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["export_job"].choices = [("", "— upload a benchmark file instead —")] + [
            (
                job.pk,
                f"export #{job.pk} · {job.counts.get('trajectories', 0)} tasks · "
                f"{job.created_at:%Y-%m-%d %H:%M}",
            )
            for job in benchmark_jobs(project)[:50]
        ]
        if len(self.fields["export_job"].choices) > 1:  # the newest export by default
            self.fields["export_job"].initial = self.fields["export_job"].choices[1][0]


def _bars(groups: dict) -> list[dict]:
    """Rows for a bar chart: AMS and TCR as percentages."""
    return [
        {
            "name": name,
            "tasks": group["tasks"],
            "steps": group["steps"],
            "ams": round(100 * group["ams"], 1),
            "tcr": round(100 * group["tcr"], 1),
        }
        for name, group in groups.items()
    ]


@login_required
def project_evaluate(request: HttpRequest, project_id: int) -> HttpResponse:
    project = access_project(request.user, project_id, roles=JOB_ROLES)
    form = EvaluateForm(request.POST or None, request.FILES or None, project=project)
    result = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            result = do_evaluate(
                project,
                data["export_job"] or None,
                data["predictions"],
                data["split"],
                benchmark=data["benchmark"],
            )
        except InvalidData as exc:
            form.add_error(None, str(exc))
    context = {"project": project, "form": form, "result": result}
    if result:
        context["charts"] = [
            ("By intent", _bars(result["by_intent"])),
            ("By length (steps)", _bars(result["by_length"])),
            ("By app", _bars(result["by_app"])),
        ]
    return render(request, "evaluation/evaluate.html", context)

"""The import and export pages of a project."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from trajectories.access import access_project
from trajectories.gold import GOLD_FORMATS, can_see_gold
from trajectories.models import Outcome, Project, Source, Status
from trajectories.selectors import status_counts, status_shares
from trajectories.validation import InvalidData
from trajectories.views import JOB_ROLES, task_choices

from .catalogue import EXPORTERS, IMPORTERS, LAYOUT_EXPORTS
from .detect import AUTO
from .jobs import do_start_export, do_start_import

IMPORT_FORMAT_NAMES = {
    "waypoint": "Waypoint export",
    "droidbot": "DroidBot output",
    "androtmem": "AndroTMem-Bench (task records and images)",
    "androidcontrol": "AndroidControl (GZIP TFRecord shards)",
    "gui-odyssey": "GUI-Odyssey (annotations and screenshots)",
    "aitw": "Android in the Wild (GZIP TFRecord shards)",
}


class ImportForm(forms.Form):
    file = forms.FileField(help_text="A .zip or .tar archive.")
    format = forms.ChoiceField(initial=AUTO, required=False)
    as_copies = forms.BooleanField(
        required=False,
        label="Import as copies",
        help_text="New ids for every trajectory, their origin recorded: for an export of "
        "another project on this instance, whose ids are taken.",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = [(AUTO, "Detect from the archive")] + [
            (name, IMPORT_FORMAT_NAMES.get(name, name)) for name in sorted(IMPORTERS)
        ]

    def clean_format(self) -> str:
        return self.cleaned_data["format"] or AUTO


EXPORT_FORMAT_NAMES = {
    "waypoint": "Waypoint (lossless, re-importable)",
    "stamp-sft": "STAMP SFT (ms-swift / LLaMA-Factory chat samples)",
    "androtmem": "AndroTMem-Bench (benchmark with anchors)",
    "memory-world": "Memory-World (tasks with memory items)",
    "androidcontrol": "AndroidControl (one record per step)",
    "gui-odyssey": "GUI-Odyssey (its own layout, importable again)",
    "aitw": "Android in the Wild (GZIP TFRecord shards, importable again)",
    "androidcontrol-tfrecord": "AndroidControl (GZIP TFRecord episodes, importable again)",
}


GOLD_ONLY = " — admins only: it carries the gold answers this project hides"


class ExportForm(forms.Form):
    format = forms.ChoiceField()
    status = forms.ChoiceField(required=False)
    outcome = forms.ChoiceField(required=False, choices=[("", "any outcome"), *Outcome.choices])
    source = forms.ChoiceField(required=False, choices=[("", "any source"), *Source.choices])
    task = forms.ChoiceField(required=False)
    apps = forms.CharField(
        required=False, help_text="Apps by part of a package or label, separated by commas."
    )
    recorded_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    recorded_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    annotator = forms.CharField(required=False, help_text="Recorded or labelled by this user.")
    trajectories = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Only these trajectory ids (one per line or separated by commas).",
    )
    split_by = forms.ChoiceField(
        required=False,
        choices=[
            ("", "no split"),
            ("trajectory", "by trajectory"),
            ("task", "grouped by task"),
            ("app", "grouped by app"),
        ],
    )
    split_ratios = forms.CharField(
        required=False, initial="train=0.9, test=0.1", help_text="name=ratio, separated by commas."
    )
    split_seed = forms.IntegerField(required=False, initial=0)
    k = forms.IntegerField(required=False, initial=5, min_value=0, label="Turns kept in full (K)")
    max_side = forms.IntegerField(
        required=False, min_value=16, label="Longest image side (px)", help_text="Empty: as is."
    )
    memory_ratio = forms.FloatField(
        required=False,
        min_value=0.01,
        label="Memory steps per other step",
        help_text="Up-sample memory steps to this ratio (STAMP: 1 or 3). Empty: no up-sampling.",
    )
    thought = forms.BooleanField(required=False, initial=True, label="Include the thought")
    trainable_only = forms.BooleanField(required=False, initial=True, label="Trainable steps only")
    parquet = forms.BooleanField(
        required=False, label="Also write Parquet with the images embedded"
    )

    FILTERS = ("status", "outcome", "source", "task", "apps", "annotator", "trajectories")
    # The dataset's own layouts (gui-odyssey, ...) are files of that dataset, not JSON Lines.
    PARQUET_FORMATS = sorted(set(EXPORTERS) - {"waypoint"} - LAYOUT_EXPORTS)

    def __init__(self, *args, project: Project, show_gold: bool = True, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # A format that carries gold is refused (403) to those the project hides it from.
        self.fields["format"].choices = [
            (
                name,
                EXPORT_FORMAT_NAMES.get(name, name)
                + ("" if show_gold or name not in GOLD_FORMATS else GOLD_ONLY),
            )
            for name in sorted(EXPORTERS)
        ]
        self.fields["task"].choices = [("", "any task"), *task_choices(project)]
        # Approved work by default: a first training set should not mix in unfinished labels.
        # Each status says how many trajectories it would export.
        self.status_counts = status_counts(project)
        self.status_shares = status_shares(self.status_counts)
        total = sum(self.status_counts.values())
        self.fields["status"].initial = Status.APPROVED
        self.fields["status"].choices = [
            ("", f"any status ({total})"),
            *(
                (value, f"{label} ({self.status_counts.get(value, 0)})")
                for value, label in Status.choices
            ),
        ]

    def clean_split_ratios(self) -> dict[str, float]:
        ratios: dict[str, float] = {}
        for part in self.cleaned_data["split_ratios"].split(","):
            if not part.strip():
                continue
            name, _, value = part.partition("=")
            try:
                ratios[name.strip()] = float(value)
            except ValueError:
                raise forms.ValidationError(
                    f"{part.strip()!r} is not name=ratio, e.g. train=0.9"
                ) from None
        return ratios

    def export_request(self) -> tuple[dict, dict, dict]:
        """(filters, options, split) as :func:`do_start_export` takes them."""
        data = self.cleaned_data
        filters = {name: data[name] for name in self.FILTERS}
        for name in ("recorded_from", "recorded_to"):
            if data[name]:
                filters[name] = data[name].isoformat()
        options: dict = {}
        split: dict = {}
        if data["format"] == "stamp-sft":
            options = {
                "k": data["k"] if data["k"] is not None else 5,
                "thought": data["thought"],
                "trainable_only": data["trainable_only"],
            }
            if data["max_side"]:
                options["max_side"] = data["max_side"]
            if data["memory_ratio"]:
                options["memory_ratio"] = data["memory_ratio"]
        if data["parquet"] and data["format"] in self.PARQUET_FORMATS:
            options["parquet"] = True
        if data["split_by"] and data["format"] != "waypoint":
            split = {
                "by": data["split_by"],
                "ratios": data["split_ratios"],
                "seed": data["split_seed"] or 0,
            }
        return filters, options, split


@login_required
def project_import(request: HttpRequest, project_id: int) -> HttpResponse:
    project = access_project(request.user, project_id, roles=JOB_ROLES)
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            job = do_start_import(
                project,
                upload,
                form.cleaned_data["format"],
                request.user,
                as_copies=form.cleaned_data["as_copies"],
            )
        except InvalidData as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("job-detail", job.pk)
    return render(request, "formats/import.html", {"project": project, "form": form})


@login_required
def project_export(request: HttpRequest, project_id: int) -> HttpResponse:
    project = access_project(request.user, project_id, roles=JOB_ROLES)
    show_gold = can_see_gold(request.user, project)
    form = ExportForm(request.POST or None, project=project, show_gold=show_gold)
    if request.method == "POST" and form.is_valid():
        filters, options, split = form.export_request()
        try:
            job = do_start_export(
                project,
                form.cleaned_data["format"],
                request.user,
                filters,
                options=options,
                split=split,
            )
        except InvalidData as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("job-detail", job.pk)
    return render(
        request,
        "formats/export.html",
        {"project": project, "form": form, "parquet_formats": " ".join(form.PARQUET_FORMATS)},
    )

"""The dashboard: the projects a user belongs to, and creating a new one."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from trajectories import selectors
from trajectories.access import projects_of
from trajectories.services import do_create_project
from trajectories.sorting import sort_columns
from trajectories.validation import InvalidData

PROJECT_COLUMNS = [
    ("Project", "name", "name"),
    ("Trajectories", "trajectories", "num"),
    ("Created", "created", "nowrap"),
]


class ProjectForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


@login_required
def project_list(request: HttpRequest) -> HttpResponse:
    form = ProjectForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = do_create_project(
                form.cleaned_data["name"], request.user, form.cleaned_data["description"]
            )
        except InvalidData as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("trajectory-list", project.pk)
    search = request.GET.get("q", "")
    sort = request.GET.get("sort", "")
    projects = selectors.project_list(request.user, search, sort)
    context = {
        "projects": projects,
        "form": form,
        "search": search,
        "any_projects": bool(projects) or projects_of(request.user).exists(),
        "columns": sort_columns(request, PROJECT_COLUMNS, sort or selectors.DEFAULT_PROJECT_SORT),
    }
    return render(request, "frontend/project_list.html", context)

"""URLs of the agent runs API, mounted under ``/api/v1/`` by ``config.urls``."""

from django.urls import path

from . import api

urlpatterns = [
    path("projects/<int:project_id>/runs/", api.ProjectRunListView.as_view(), name="api-runs"),
    path(
        "projects/<int:project_id>/runs/matrix",
        api.RunMatrixView.as_view(),
        name="api-runs-matrix",
    ),
    path(
        "projects/<int:project_id>/runs/compare",
        api.RunCompareView.as_view(),
        name="api-runs-compare",
    ),
    path("runs/<int:run_id>/", api.RunDetailView.as_view(), name="api-run"),
    path(
        "projects/<int:project_id>/suites/",
        api.ProjectSuiteListView.as_view(),
        name="api-suites",
    ),
    path(
        "projects/<int:project_id>/suites/<str:name>/<str:version>/",
        api.SuiteExportView.as_view(),
        name="api-suite",
    ),
]

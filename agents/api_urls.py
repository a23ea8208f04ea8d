"""URLs of the agent runs API, mounted under ``/api/v1/`` by ``config.urls``."""

from django.urls import path

from . import api, endpoint_api

urlpatterns = [
    path("endpoints/", endpoint_api.SiteEndpointListView.as_view(), name="api-endpoints"),
    path("endpoints/<str:name>/", endpoint_api.SiteEndpointView.as_view(), name="api-endpoint"),
    path(
        "projects/<int:project_id>/endpoints/",
        endpoint_api.ProjectEndpointListView.as_view(),
        name="api-project-endpoints",
    ),
    path(
        "projects/<int:project_id>/endpoints/<str:name>/",
        endpoint_api.ProjectEndpointView.as_view(),
        name="api-project-endpoint",
    ),
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
    path(
        "projects/<int:project_id>/suites/<str:name>/<str:version>/calibrate/",
        api.SuiteCalibrateView.as_view(),
        name="api-suite-calibrate",
    ),
]

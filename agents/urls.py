from django.urls import path

from . import views

urlpatterns = [
    path("projects/<int:project_id>/runs/", views.project_runs, name="project-runs"),
    path("projects/<int:project_id>/runs/compare/", views.runs_compare, name="runs-compare"),
    path("runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path(
        "projects/<int:project_id>/suites/<str:name>/<str:version>/calibrate/",
        views.calibrate_suite,
        name="suite-calibrate",
    ),
]

"""The evaluation endpoint, mounted under ``/api/v1/`` by ``config.urls``."""

from django.urls import path

from .api import EvaluationView

urlpatterns = [
    path(
        "projects/<int:project_id>/evaluations/",
        EvaluationView.as_view(),
        name="api-project-evaluations",
    ),
]

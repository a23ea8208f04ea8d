"""URLs of the explorations API, mounted under ``/api/v1/`` by ``config.urls``."""

from django.urls import path

from . import api

urlpatterns = [
    path(
        "projects/<int:project_id>/explorations/",
        api.ProjectExplorationListView.as_view(),
        name="api-explorations",
    ),
    path(
        "explorations/<int:exploration_id>/",
        api.ExplorationDetailView.as_view(),
        name="api-exploration",
    ),
    path(
        "explorations/<int:exploration_id>/stop",
        api.ExplorationStopView.as_view(),
        name="api-exploration-stop",
    ),
    path(
        "projects/<int:project_id>/deny-lists/<str:app>",
        api.DenyListView.as_view(),
        name="api-deny-list",
    ),
    path(
        "explorations/<int:exploration_id>/resume",
        api.ExplorationResumeView.as_view(),
        name="api-exploration-resume",
    ),
]

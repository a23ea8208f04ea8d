"""URLs of the memory graph API, mounted under ``/api/v1/`` by ``config.urls``."""

from django.urls import path

from . import api, appkg_api

urlpatterns = [
    path(
        "projects/<int:project_id>/graphs/",
        api.ProjectGraphListView.as_view(),
        name="api-project-graphs",
    ),
    path(
        "projects/<int:project_id>/graphs/import",
        api.GraphImportView.as_view(),
        name="api-project-graph-import",
    ),
    path("graphs/<int:graph_id>/", api.GraphDetailView.as_view(), name="api-graph"),
    path("graphs/<int:graph_id>/export", api.GraphExportView.as_view(), name="api-graph-export"),
    path(
        "graphs/<int:graph_id>/retrieve",
        api.GraphRetrieveView.as_view(),
        name="api-graph-retrieve",
    ),
    path(
        "projects/<int:project_id>/app-graphs/",
        appkg_api.ProjectAppGraphListView.as_view(),
        name="api-project-app-graphs",
    ),
    path(
        "projects/<int:project_id>/app-graphs/import",
        appkg_api.AppGraphImportView.as_view(),
        name="api-project-app-graphs-import",
    ),
    path(
        "app-graphs/<int:graph_id>/export",
        appkg_api.AppGraphExportView.as_view(),
        name="api-app-graph-export",
    ),
    path(
        "app-graphs/<int:graph_id>/locate",
        appkg_api.AppGraphLocateView.as_view(),
        name="api-app-graph-locate",
    ),
]

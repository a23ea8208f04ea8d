"""The import and export endpoints, mounted under ``/api/v1/`` by ``config.urls``."""

from django.urls import path

from . import api

urlpatterns = [
    path(
        "projects/<int:project_id>/imports/", api.ImportView.as_view(), name="api-project-imports"
    ),
    path(
        "projects/<int:project_id>/exports/", api.ExportView.as_view(), name="api-project-exports"
    ),
]

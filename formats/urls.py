from django.urls import path

from . import views

urlpatterns = [
    path("projects/<int:project_id>/import/", views.project_import, name="project-import"),
    path("projects/<int:project_id>/export/", views.project_export, name="project-export"),
]

from django.urls import path

from .views import project_evaluate

urlpatterns = [
    path("projects/<int:project_id>/evaluate/", project_evaluate, name="project-evaluate"),
]

from django.urls import path

from . import views

urlpatterns = [
    path(
        "projects/<int:project_id>/explorations/",
        views.project_explorations,
        name="project-explorations",
    ),
    path("explorations/<int:exploration_id>/", views.exploration_detail, name="exploration-detail"),
    path("explorations/<int:exploration_id>/stop", views.exploration_stop, name="exploration-stop"),
    path(
        "explorations/<int:exploration_id>/resume",
        views.exploration_resume,
        name="exploration-resume",
    ),
]

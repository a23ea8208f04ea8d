from django.urls import path

from . import views

urlpatterns = [
    path(
        "projects/<int:project_id>/environments/",
        views.project_generations,
        name="project-generations",
    ),
    path("generations/<int:generation_id>/", views.generation_detail, name="generation-detail"),
    path(
        "generations/<int:generation_id>/gallery/",
        views.generation_gallery,
        name="generation-gallery",
    ),
]

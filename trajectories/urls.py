from django.urls import path

from . import views

urlpatterns = [
    path(
        "projects/<int:project_id>/trajectories/",
        views.trajectory_list,
        name="trajectory-list",
    ),
    path(
        "projects/<int:project_id>/tasks/suggestions/",
        views.task_suggestions,
        name="task-suggestions",
    ),
    path("projects/<int:project_id>/members/", views.project_members, name="project-members"),
    path("projects/<int:project_id>/settings/", views.project_settings, name="project-settings"),
    path(
        "projects/<int:project_id>/members/<int:user_id>/role/",
        views.project_member_role,
        name="project-member-role",
    ),
    path(
        "projects/<int:project_id>/members/<int:user_id>/remove/",
        views.project_member_remove,
        name="project-member-remove",
    ),
    path("trajectories/<int:trajectory_id>/", views.trajectory_detail, name="trajectory-detail"),
    path(
        "trajectories/<int:trajectory_id>/steps/<int:index>/",
        views.step_detail,
        name="step-detail",
    ),
    path("blobs/<str:sha256>/", views.blob, name="blob"),
    path("jobs/<int:job_id>/", views.job_detail, name="job-detail"),
    path("jobs/<int:job_id>/download/", views.job_download, name="job-download"),
    path("jobs/<int:job_id>/retry/", views.job_retry, name="job-retry"),
]

"""URLs of the REST API, mounted under ``/api/v1/`` by ``config.urls``."""

from django.urls import path

from . import api

urlpatterns = [
    path("auth/token/", api.TokenView.as_view(), name="api-token"),
    path("projects/", api.ProjectListView.as_view(), name="api-projects"),
    path("projects/<int:project_id>/", api.ProjectDetailView.as_view(), name="api-project"),
    path(
        "projects/<int:project_id>/members/",
        api.ProjectMemberListView.as_view(),
        name="api-project-members",
    ),
    path(
        "projects/<int:project_id>/members/<int:user_id>/",
        api.ProjectMemberDetailView.as_view(),
        name="api-project-member",
    ),
    path(
        "projects/<int:project_id>/tasks/",
        api.ProjectTaskListView.as_view(),
        name="api-project-tasks",
    ),
    path(
        "projects/<int:project_id>/trajectories/",
        api.ProjectTrajectoryListView.as_view(),
        name="api-project-trajectories",
    ),
    path(
        "projects/<int:project_id>/jobs/", api.ProjectJobListView.as_view(), name="api-project-jobs"
    ),
    path("tasks/<int:task_id>/", api.TaskDetailView.as_view(), name="api-task"),
    path(
        "trajectories/<int:trajectory_id>/",
        api.TrajectoryDetailView.as_view(),
        name="api-trajectory",
    ),
    path(
        "trajectories/<int:trajectory_id>/steps/",
        api.StepListView.as_view(),
        name="api-trajectory-steps",
    ),
    path(
        "trajectories/<int:trajectory_id>/steps/<int:index>/",
        api.StepDetailView.as_view(),
        name="api-trajectory-step",
    ),
    path("blobs/<str:sha256>/", api.BlobView.as_view(), name="api-blob"),
    path("jobs/<int:job_id>/", api.JobDetailView.as_view(), name="api-job"),
    path("jobs/<int:job_id>/download/", api.JobDownloadView.as_view(), name="api-job-download"),
    path("jobs/<int:job_id>/retry/", api.JobRetryView.as_view(), name="api-job-retry"),
]

"""HTML pages of the annotation workflow."""

from django.urls import path

from . import views

urlpatterns = [
    path(
        "trajectories/<int:trajectory_id>/workspace/",
        views.workspace,
        name="annotate-workspace",
    ),
    path(
        "trajectories/<int:trajectory_id>/workspace/proposals/",
        views.workspace_proposals,
        name="annotate-workspace-proposals",
    ),
    path(
        "trajectories/<int:trajectory_id>/workspace/<str:op>/",
        views.workspace_edit,
        name="annotate-edit",
    ),
    path("review/", views.review_queue, name="annotate-review"),
    path("inbox/", views.inbox, name="annotate-inbox"),
    path(
        "review/comments/<int:comment_id>/resolve/",
        views.resolve_comment,
        name="annotate-resolve-comment",
    ),
    path(
        "projects/<int:project_id>/assignments/",
        views.assignments,
        name="annotate-assignments",
    ),
    path(
        "projects/<int:project_id>/assignments/<int:assignment_id>/remove/",
        views.unassign,
        name="annotate-unassign",
    ),
    path("projects/<int:project_id>/agreement/", views.agreement, name="annotate-agreement"),
    path("projects/<int:project_id>/progress/", views.progress, name="annotate-progress"),
    path("projects/<int:project_id>/proposals/", views.proposals, name="annotate-proposals"),
]

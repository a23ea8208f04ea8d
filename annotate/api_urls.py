"""The labels, review and assignment API, mounted under ``/api/v1/`` by ``config.urls``."""

from django.urls import path

from . import api

T = "trajectories/<int:trajectory_id>/"

urlpatterns = [
    path(T + "labels/", api.LabelsView.as_view(), name="api-labels"),
    path(T + "subgoals/split/", api.SplitView.as_view(), name="api-subgoal-split"),
    path(T + "subgoals/<int:subgoal_id>/", api.SubgoalView.as_view(), name="api-subgoal"),
    path(T + "subgoals/<int:subgoal_id>/merge/", api.MergeView.as_view(), name="api-subgoal-merge"),
    path(T + "step-labels/<int:index>/", api.StepLabelView.as_view(), name="api-step-labels"),
    path(T + "memory-targets/", api.MemoryTargetListView.as_view(), name="api-memory-targets"),
    path(
        T + "memory-targets/<int:target_id>/",
        api.MemoryTargetView.as_view(),
        name="api-memory-target",
    ),
    path(T + "anchors/", api.AnchorListView.as_view(), name="api-anchors"),
    path(T + "anchors/<str:key>/", api.AnchorView.as_view(), name="api-anchor"),
    path(T + "anchor-links/", api.AnchorLinkListView.as_view(), name="api-anchor-links"),
    path(T + "anchor-links/<int:link_id>/", api.AnchorLinkView.as_view(), name="api-anchor-link"),
    path(T + "undo/", api.UndoView.as_view(), name="api-undo"),
    path(T + "redo/", api.RedoView.as_view(), name="api-redo"),
    path(T + "submit/", api.SubmitView.as_view(), name="api-submit"),
    path(T + "review/", api.ReviewView.as_view(), name="api-review"),
    path(T + "comments/", api.CommentListView.as_view(), name="api-comments"),
    path(T + "comments/<int:comment_id>/", api.CommentView.as_view(), name="api-comment"),
    path(T + "proposals/", api.ProposeView.as_view(), name="api-propose"),
    path(
        T + "proposals/<int:proposal_id>/accept/",
        api.ProposalAcceptView.as_view(),
        name="api-proposal-accept",
    ),
    path(
        T + "proposals/<int:proposal_id>/reject/",
        api.ProposalRejectView.as_view(),
        name="api-proposal-reject",
    ),
    path(
        "projects/<int:project_id>/proposals/",
        api.ProjectProposeView.as_view(),
        name="api-project-propose",
    ),
    path(T + "history/", api.HistoryView.as_view(), name="api-history"),
    path(
        "projects/<int:project_id>/assignments/",
        api.AssignmentListView.as_view(),
        name="api-assignments",
    ),
    path("projects/<int:project_id>/agreement/", api.AgreementView.as_view(), name="api-agreement"),
]

from django.urls import path

from evaluation.views import project_evaluate
from graphs import views as graph_views

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
    path("projects/<int:project_id>/import/", views.project_import, name="project-import"),
    path("projects/<int:project_id>/export/", views.project_export, name="project-export"),
    path("projects/<int:project_id>/evaluate/", project_evaluate, name="project-evaluate"),
    path("projects/<int:project_id>/members/", views.project_members, name="project-members"),
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
    path("projects/<int:project_id>/graphs/", graph_views.project_graphs, name="project-graphs"),
    path("graphs/<int:graph_id>/", graph_views.memory_graph_view, name="memory-graph-view"),
    path(
        "graphs/<int:graph_id>/nodes/<str:node_id>/",
        graph_views.memory_graph_node,
        name="memory-graph-node",
    ),
    path(
        "graphs/<int:graph_id>/edges/<str:edge_id>/",
        graph_views.memory_graph_edge,
        name="memory-graph-edge",
    ),
    path(
        "graphs/<int:graph_id>/retrieve/",
        graph_views.memory_graph_retrieve,
        name="memory-graph-retrieve",
    ),
    path("app-graphs/<int:graph_id>/", graph_views.app_graph_view, name="app-graph-view"),
    path(
        "app-graphs/<int:graph_id>/nodes/<str:node_id>/",
        graph_views.app_graph_node,
        name="app-graph-node",
    ),
    path(
        "app-graphs/<int:graph_id>/edges/<str:edge_id>/",
        graph_views.app_graph_edge,
        name="app-graph-edge",
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

from django.urls import path

from . import views

urlpatterns = [
    path("projects/<int:project_id>/graphs/", views.project_graphs, name="project-graphs"),
    path("graphs/<int:graph_id>/", views.memory_graph_view, name="memory-graph-view"),
    path(
        "graphs/<int:graph_id>/nodes/<str:node_id>/",
        views.memory_graph_node,
        name="memory-graph-node",
    ),
    path(
        "graphs/<int:graph_id>/edges/<str:edge_id>/",
        views.memory_graph_edge,
        name="memory-graph-edge",
    ),
    path(
        "graphs/<int:graph_id>/retrieve/",
        views.memory_graph_retrieve,
        name="memory-graph-retrieve",
    ),
    path("app-graphs/<int:graph_id>/", views.app_graph_view, name="app-graph-view"),
    path(
        "app-graphs/<int:graph_id>/nodes/<str:node_id>/",
        views.app_graph_node,
        name="app-graph-node",
    ),
    path(
        "app-graphs/<int:graph_id>/edges/<str:edge_id>/",
        views.app_graph_edge,
        name="app-graph-edge",
    ),
]

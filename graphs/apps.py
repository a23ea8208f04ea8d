from django.apps import AppConfig


class GraphsConfig(AppConfig):
    name = "graphs"
    label = "graphs"
    verbose_name = "Memory graphs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from trajectories.jobs import register_runner
        from trajectories.models import JobKind

        from .appkg_jobs import run_app_graph_job
        from .services import run_memory_graph_job

        register_runner(JobKind.MEMORY_GRAPH, run_memory_graph_job)
        register_runner(JobKind.APP_GRAPH, run_app_graph_job)

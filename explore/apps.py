from django.apps import AppConfig


class ExploreConfig(AppConfig):
    name = "explore"
    verbose_name = "Exploration"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from trajectories.jobs import register_runner
        from trajectories.models import JobKind

        from .walk import run_exploration_job

        register_runner(JobKind.EXPLORE, run_exploration_job)

from django.apps import AppConfig


class EnvironmentsConfig(AppConfig):
    name = "environments"
    verbose_name = "Generated environments"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from trajectories.jobs import register_runner
        from trajectories.models import JobKind

        from .pipeline import run_generation_job

        register_runner(JobKind.GENERATE, run_generation_job)

from django.apps import AppConfig


class FormatsConfig(AppConfig):
    name = "formats"
    verbose_name = "Dataset formats"

    def ready(self) -> None:
        from trajectories.jobs import register_runner
        from trajectories.models import JobKind

        from .jobs import run_export_job, run_import_job

        register_runner(JobKind.IMPORT, run_import_job)
        register_runner(JobKind.EXPORT, run_export_job)

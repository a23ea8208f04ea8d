from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents on devices"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from trajectories.jobs import register_runner
        from trajectories.models import JobKind

        from .runner import run_agent_run

        register_runner(JobKind.AGENT_RUN, run_agent_run)

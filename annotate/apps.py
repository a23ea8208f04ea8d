from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    name = "annotate"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from trajectories.jobs import register_runner
        from trajectories.labels.protocol import labels_restored
        from trajectories.models import JobKind

        from .services.proposals import follow_restored_labels, run_proposal_job

        register_runner(JobKind.PROPOSE, run_proposal_job)
        labels_restored.connect(follow_restored_labels, dispatch_uid="proposal-decisions")

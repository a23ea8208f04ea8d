from celery import shared_task
from django.db import OperationalError

from . import pipeline


@shared_task(
    name=pipeline.BUILD_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
)
def build_task(environment_id: int) -> None:
    """Build one generated environment; a second delivery of the message does nothing."""
    pipeline.build_environment(environment_id)

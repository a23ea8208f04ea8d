from celery import shared_task
from django.db import OperationalError

from . import runner


@shared_task(
    name=runner.EPISODE_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
)
def run_episode_task(episode_id: int) -> None:
    """Play one episode of an agent run; a second delivery of the message does nothing."""
    runner.run_episode(episode_id)

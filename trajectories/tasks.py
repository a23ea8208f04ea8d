from celery import shared_task
from django.db import OperationalError

from . import jobs


@shared_task(
    name="trajectories.run_job",
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
)
def run_job_task(job_id: int) -> None:
    """Run a queued import or export job; a second delivery of the message does nothing."""
    jobs.run_job(job_id)

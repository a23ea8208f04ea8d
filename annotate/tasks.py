from celery import shared_task
from django.db import OperationalError

from .services import proposals


@shared_task(
    name=proposals.PROPOSE_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
)
def propose_task(proposal_id: int, job_id: int | None = None) -> None:
    """Propose labels for one trajectory; a second delivery of the message does nothing."""
    proposals.run_dispatched_proposal(proposal_id, job_id)

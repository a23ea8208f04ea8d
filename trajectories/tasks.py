import logging
import threading

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import OperationalError, connection

from . import jobs

log = logging.getLogger(__name__)


@shared_task(
    name=jobs.RUN_JOB_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
)
def run_job_task(job_id: int) -> None:
    """Run a queued import or export job; a second delivery of the message does nothing."""
    jobs.run_job(job_id)


_reaper_stop = threading.Event()


def _reap_forever() -> None:
    """Beside the worker's jobs: requeue or fail the jobs of workers that vanished."""
    while True:
        try:
            reaped = jobs.reap_stale_jobs()
            if reaped["requeued"] or reaped["failed"]:
                log.warning("reaper: %s", reaped)
        except Exception:  # noqa: BLE001 - the database may be restarting; try again later
            log.exception("reaper: failed")
        finally:
            connection.close()
        if _reaper_stop.wait(settings.WAYPOINT_JOB_REAP_S):
            return


@worker_ready.connect
def start_reaper(**kwargs) -> None:
    _reaper_stop.clear()
    threading.Thread(target=_reap_forever, name="job-reaper", daemon=True).start()


@worker_shutdown.connect
def stop_reaper(**kwargs) -> None:
    _reaper_stop.set()

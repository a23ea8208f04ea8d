"""``manage.py reap_jobs``: requeue or fail jobs whose worker vanished, and clean their files.

Every worker already does this every WAYPOINT_JOB_REAP_S seconds; run it from cron where jobs
may be orphaned while no worker runs.
"""

from django.core.management.base import BaseCommand

from trajectories.jobs import reap_stale_jobs


class Command(BaseCommand):
    help = "Requeue or fail jobs whose worker vanished; remove their leftover files."

    def handle(self, *args, **options):
        reaped = reap_stale_jobs()
        self.stdout.write(
            f"{reaped['requeued']} requeued, {reaped['failed']} failed, "
            f"{reaped['folders']} leftovers removed"
        )

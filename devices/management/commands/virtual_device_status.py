"""``manage.py virtual_device_status [--wait SECONDS]``: did the virtual device come up?

`make run` starts the device in the background and calls this to tell the terminal the outcome.
Exits 0 when the device is ready, 1 otherwise.
"""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from devices.virtual.status import READY, wait_for_status


class Command(BaseCommand):
    help = "Say whether the virtual device started by `manage.py virtual_device` is up."

    def add_arguments(self, parser):
        parser.add_argument("--wait", type=float, default=0, help="seconds to wait for it")
        parser.add_argument("--pid", type=int, default=0, help="the device's process")

    def handle(self, *args, **options):
        status = wait_for_status(
            settings.WAYPOINT_VIRTUAL_DEVICE_STATUS, options["wait"], options["pid"]
        )
        if status is None:
            raise CommandError(
                "the virtual device has not said anything; is `manage.py virtual_device` running?"
            )
        if status.state == READY and not status.problem:
            self.stdout.write(f"Virtual device ready: {status.serial} ({status.detail})")
            return
        raise CommandError(status.problem or f"the virtual device is {status.state}")

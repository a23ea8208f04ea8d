"""``manage.py adb_server``: start the adb server Waypoint watches on this machine, unless it runs.

That is the first local server of ``ADB_SERVERS`` (by default adb's own port,
``ANDROID_ADB_SERVER_PORT``, else 5037), started with the adbutils wheel's adb. `make run`
calls it, so phones plugged in and the virtual device show on the devices page, on the port
configured rather than on whichever adb server happens to hold 5037.
"""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from devices.services.adb import AdbServerError, local_adb_port, start_adb_server


class Command(BaseCommand):
    help = "Start the local adb server of ADB_SERVERS unless one answers on its port."

    def handle(self, *args, **options):
        port = local_adb_port()
        if port is None:
            servers = ", ".join(settings.ADB_SERVERS) or "nothing"
            self.stdout.write(f"ADB_SERVERS lists no adb server on this machine ({servers}).")
            return
        try:
            started = start_adb_server(port)
        except AdbServerError as exc:
            raise CommandError(str(exc)) from exc
        state = "started" if started else "already running"
        self.stdout.write(f"adb server 127.0.0.1:{port}: {state}")

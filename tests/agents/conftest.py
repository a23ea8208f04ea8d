"""The agents' tests drive a virtual device of their own through a private adb server."""

from tests.devices.conftest import adb_server, device, virtual_device  # noqa: F401

"""The agents' tests drive a virtual device of their own through a private adb server."""

from tests.devices.conftest import (  # noqa: F401
    adb_server,
    adb_servers,
    device,
    project_device,
    virtual_device,
)

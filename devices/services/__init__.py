"""Device services: discovery, leases, actions, capture and step-by-step recording."""

from .adb import DeviceUnavailable, discover_devices, find_device
from .leases import (
    LeaseConflict,
    active_lease,
    check_driver,
    do_heartbeat,
    do_release_device,
    do_take_device,
)
from .recording import (
    DeviceGone,
    RecordingError,
    connect,
    do_add_note,
    do_finish_recording,
    do_import_virtual_tasks,
    do_interrupt,
    do_mark_memory_target,
    do_resume_recording,
    do_start_recording,
    do_undo_last_step,
    do_update_step_labels,
    record_step,
)

__all__ = [
    "DeviceGone",
    "DeviceUnavailable",
    "LeaseConflict",
    "RecordingError",
    "active_lease",
    "check_driver",
    "connect",
    "discover_devices",
    "do_add_note",
    "do_finish_recording",
    "do_heartbeat",
    "do_import_virtual_tasks",
    "do_interrupt",
    "do_mark_memory_target",
    "do_release_device",
    "do_resume_recording",
    "do_start_recording",
    "do_take_device",
    "do_undo_last_step",
    "do_update_step_labels",
    "find_device",
    "record_step",
]

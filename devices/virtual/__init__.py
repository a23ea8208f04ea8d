"""The virtual device: an Android phone over the real ADB protocol, running mobile web apps.

Public API (importable without Django):

- ``VirtualDevice(port=..., size=..., seed=..., apps=[...], chromium_path=...)`` with
  ``.start()``, ``.stop()``, ``.serial`` and ``.visible_vars()``.
- ``load_apps(seed, names)`` -> ``Catalog`` of apps, memory variables and tasks (gold answers):
  each task template's instance at that seed (``templates.py``; the apps' data: ``content/``).
- ``grade(rule, gold, answer)``.
"""

from devices.virtual.apps import Catalog, Task, Variable, grade, load_apps
from devices.virtual.device import DeviceConfig, VirtualDevice

__all__ = ["Catalog", "DeviceConfig", "Task", "Variable", "VirtualDevice", "grade", "load_apps"]

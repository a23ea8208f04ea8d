"""Suites: a named, versioned list of task instances (template id + seed), as a JSON document
that is exported and imported unchanged, so two labs run the same benchmark.

The document::

    {"format": "waypoint-suite", "schema_version": 1, "name": "memory-basics", "version": "1",
     "instances": [{"template": "freshcart-order-number", "seed": 1}, ...]}

This is the runner's minimal version (until the environment's fuller one lands): templates
are the virtual device's tasks, as ``devices.virtual.load_apps`` reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from devices.services.environment import MAX_SEED
from devices.virtual import load_apps
from trajectories.validation import InvalidData

FORMAT = "waypoint-suite"
SCHEMA_VERSION = 1
MAX_INSTANCES = 10_000


def known_templates() -> list[str]:
    """The ids of the task templates the virtual device has."""
    return [task.id for task in load_apps(0).tasks]


def make_suite(
    name: str, version: str, template_ids: Iterable[str], seeds: Iterable[int]
) -> dict[str, Any]:
    """A suite of every template at every seed, templates first (checked)."""
    seeds = list(seeds)
    document = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "version": version,
        "instances": [{"template": t, "seed": s} for t in template_ids for s in seeds],
    }
    return check_suite(document)


def _text(document: dict[str, Any], field: str, longest: int) -> str:
    value = document.get(field)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise InvalidData(f"{field}: must be a non-empty string, got {value!r}")
    if len(value.strip()) > longest:
        raise InvalidData(f"{field}: at most {longest} characters, got {len(value.strip())}")
    return value.strip()


def check_suite(document: Any) -> dict[str, Any]:
    """The suite document, checked and normalised; :class:`InvalidData` names what is wrong."""
    if not isinstance(document, dict):
        raise InvalidData(f"suite: must be a JSON object, got {type(document).__name__}")
    if document.get("format", FORMAT) != FORMAT:
        raise InvalidData(f"format: must be {FORMAT!r}, got {document.get('format')!r}")
    name = _text(document, "name", 100)
    version = _text(document, "version", 32)
    instances = document.get("instances")
    if not isinstance(instances, list) or not instances:
        raise InvalidData("instances: must be a non-empty list of {template, seed}")
    if len(instances) > MAX_INSTANCES:
        raise InvalidData(f"instances: at most {MAX_INSTANCES}, got {len(instances)}")
    known = set(known_templates())
    seen: set[tuple[str, int]] = set()
    checked = []
    for i, item in enumerate(instances):
        where = f"instances[{i}]"
        if not isinstance(item, dict):
            raise InvalidData(f"{where}: must be an object with template and seed")
        template, seed = item.get("template"), item.get("seed")
        if not isinstance(template, str) or template not in known:
            raise InvalidData(
                f"{where}.template: no task template {template!r} on the virtual device"
            )
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise InvalidData(f"{where}.seed: must be a whole number from 0 to {MAX_SEED}")
        if (template, seed) in seen:
            raise InvalidData(f"{where}: {template} at seed {seed} is listed twice")
        seen.add((template, seed))
        checked.append({"template": template, "seed": seed})
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "version": version,
        "instances": checked,
    }

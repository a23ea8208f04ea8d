"""A trajectory's labels and steps at one version, kept between requests in each web process.

The workspace (every page and step switch) and the labels API (every read, and the answer to
every edit) show all of a trajectory's labels and its steps: four queries each time, while
most requests of a labelling team look at a trajectory nobody changed since the last one.
Every label change (a step's labels included) goes through the edit protocol
(``protocol.bump``), which raises the trajectory's ``version`` in the transaction that writes
the labels; a recorded step raises its ``step_count``, and undoing one raises the version too.
So the labels and steps read at a (version, step count) are those of every request that loads
the trajectory at that version and step count. Entries are named by both and never have to be
deleted: a change makes new names.

Labels and steps are kept only when the trajectory is still at the version they were read
for (one more query on a miss): under READ COMMITTED an edit committed between loading the
trajectory and reading its labels would otherwise file the new labels under the old version.

``WAYPOINT_LABELS_CACHE_S`` bounds how long an entry lives (0 turns the cache off). Inside a
transaction (``ATOMIC_REQUESTS``, a test case, an edit) the labels are always read: that
transaction's own changes are not committed yet.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.db import connection

from trajectories.models import Trajectory
from trajectories.selectors import step_rows

from .parts import label_parts

CACHE = "labels"
# What can be kept, and how each is read.
READERS = {"labels": label_parts, "steps": step_rows}


def kept_at_version(trajectory: Trajectory, *names: str) -> dict[str, Any]:
    """What each of :data:`READERS` named reads of the trajectory at the version (and step
    count) it was loaded with, from this process's cache when read before at that version:
    ``labels`` (:func:`~trajectories.labels.parts.label_parts`: subgoals, memory targets,
    anchors and links), ``steps`` (:func:`~trajectories.selectors.step_rows`). What was not
    kept is read, then kept after one check that the trajectory is still at that version.

    The caller owns what it gets: a cached entry is a copy (the cache stores it pickled).
    """
    lifetime = settings.WAYPOINT_LABELS_CACHE_S
    if not lifetime or connection.in_atomic_block:
        return {name: READERS[name](trajectory) for name in names}
    version, steps = trajectory.version, trajectory.step_count
    at = f"{trajectory.pk}:{trajectory.uid}:{version}:{steps}"
    keys = {name: f"{name}:{at}" for name in names}
    cache = caches[CACHE]
    found = cache.get_many(keys.values())
    read = {keys[name]: READERS[name](trajectory) for name in names if keys[name] not in found}
    if read:
        still = Trajectory.objects.filter(pk=trajectory.pk, version=version, step_count=steps)
        if still.exists():
            cache.set_many(read, lifetime)
        found.update(read)
    return {name: found[keys[name]] for name in names}


def labels_at_version(trajectory: Trajectory) -> dict[str, Any]:
    """The ``labels`` of :func:`kept_at_version`."""
    return kept_at_version(trajectory, "labels")["labels"]

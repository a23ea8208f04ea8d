"""A trajectory's labels at one version, kept between requests in each web process.

The workspace (every page and step switch) and the labels API (every read, and the answer to
every edit) show all of a trajectory's labels: three queries each time, while most
requests of a labelling team look at a trajectory nobody changed since the last one. Every
label change goes through the edit protocol (``protocol.bump``), which raises the
trajectory's ``version`` in the transaction that writes the labels, and a recorded step raises
its ``step_count``; so the labels read at a (version, step count) are the labels of every
request that loads the trajectory at that version and step count. Entries are named by both
and never have to be deleted: a change makes new names.

Labels are kept only when the trajectory is still at the version they were read for (one more
query on a miss): under READ COMMITTED an edit committed between loading the trajectory and
reading its labels would otherwise file the new labels under the old version.

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

from .parts import label_parts

CACHE = "labels"


def labels_at_version(trajectory: Trajectory) -> dict[str, Any]:
    """:func:`~trajectories.labels.parts.label_parts` (subgoals, memory targets, anchors and
    links) of the trajectory at the version (and step count) it was loaded with, from this
    process's cache when read before at that version.

    The caller owns what it gets: a cached entry is a copy (the cache stores it pickled).
    """
    lifetime = settings.WAYPOINT_LABELS_CACHE_S
    if not lifetime or connection.in_atomic_block:
        return label_parts(trajectory)
    version, steps = trajectory.version, trajectory.step_count
    key = f"labels:{trajectory.pk}:{trajectory.uid}:{version}:{steps}"
    cache = caches[CACHE]
    labels = cache.get(key)
    if labels is None:
        labels = label_parts(trajectory)
        still = Trajectory.objects.filter(pk=trajectory.pk, version=version, step_count=steps)
        if still.exists():
            cache.set(key, labels, lifetime)
    return labels

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

from .parts import Part, label_parts, step_labels

CACHE = "labels"
# What can be kept, and how each is read.
READERS = {"labels": label_parts, "steps": step_rows, "step_labels": step_labels}


def kept_at_version(trajectory: Trajectory, *names: str) -> dict[str, Any]:
    """What each of :data:`READERS` named reads of the trajectory at the version (and step
    count) it was loaded with, from this process's cache when read before at that version:
    ``labels`` (:func:`~trajectories.labels.parts.label_parts`: subgoals, memory targets,
    anchors and links), ``steps`` (:func:`~trajectories.selectors.step_rows`: what the
    workspace shows of each step), ``step_labels``
    (:func:`~trajectories.labels.parts.step_labels`: the labels API's). What was not kept is
    read, then kept after one check that the trajectory is still at that version.

    The caller owns what it gets: a cached entry is a copy (the cache stores it pickled).
    """
    lifetime = settings.WAYPOINT_LABELS_CACHE_S
    if not lifetime or connection.in_atomic_block:
        return {name: READERS[name](trajectory) for name in names}
    version, steps = trajectory.version, trajectory.step_count
    keys = {name: _key(name, trajectory, version) for name in names}
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


def _key(name: str, trajectory: Trajectory, version: int) -> str:
    return f"{name}:{trajectory.pk}:{trajectory.uid}:{version}:{trajectory.step_count}"


def carry_forward(trajectory: Trajectory, version: int, part: Part, after: Any) -> None:
    """After an edit committed that raised the trajectory from ``version`` to the next one,
    changing only ``part`` of its labels, to ``after`` (its :func:`~.parts.snapshot`, read
    under the row lock): what this process kept at ``version`` is, with that part replaced,
    what the next version holds. Kept under the next version, so that the edit's answer and
    the editor's next page need not read the labels again."""
    lifetime = settings.WAYPOINT_LABELS_CACHE_S
    if not lifetime:
        return
    cache = caches[CACHE]
    keys = {name: _key(name, trajectory, version) for name in READERS}
    found = cache.get_many(keys.values())
    changed = {}
    for name, key in keys.items():
        if key in found:
            changed[_key(name, trajectory, version + 1)] = _replaced(name, found[key], part, after)
    if changed:
        cache.set_many(changed, lifetime)


def _replaced(name: str, kept: Any, part: Part, after: Any) -> Any:
    """``kept`` (what READERS[name] read) with ``part`` of the labels replaced by ``after``."""
    if part.startswith("step:"):
        index = int(part.removeprefix("step:"))
        if name == "steps":
            return [{**row, **after} if row["index"] == index else row for row in kept]
        if name == "step_labels":
            return [after if row["index"] == index else row for row in kept]
    elif name == "labels":
        if part == "anchors":
            return {**kept, **after}  # the anchors and their links
        if part in kept:
            return {**kept, part: after}
    return kept  # a part this one does not hold (the notes)

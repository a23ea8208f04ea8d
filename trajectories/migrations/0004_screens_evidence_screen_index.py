"""Memory target evidence names its screen by index within the trajectory, not by row id.

The recording console stored ``evidence["screen"]`` as the Screen's primary key; exports and
imports number screens within their trajectory, so after a round trip the row id pointed at
another trajectory's screen. Evidence of a screen that is not the trajectory's (or no longer
exists) loses its ``screen``; parked targets in the metadata are converted the same way.
"""

from django.db import migrations


def _index_of(positions: dict[int, int], evidence) -> bool:
    """Rewrite evidence["screen"] from a row id to an index; True when it changed."""
    if not isinstance(evidence, dict) or "screen" not in evidence:
        return False
    row = evidence["screen"]
    if isinstance(row, int) and row in positions:
        evidence["screen"] = positions[row]
    else:
        del evidence["screen"]
    return True


def _positions(Screen, trajectory_id: int) -> dict[int, int]:
    ids = (
        Screen.objects.filter(trajectory_id=trajectory_id)
        .order_by("id")
        .values_list("id", flat=True)
    )
    return {pk: i for i, pk in enumerate(ids)}


def screen_ids_to_indexes(apps, schema_editor):
    Screen = apps.get_model("trajectories", "Screen")
    MemoryTarget = apps.get_model("trajectories", "MemoryTarget")
    Trajectory = apps.get_model("trajectories", "Trajectory")
    cache: dict[int, dict[int, int]] = {}

    def positions(trajectory_id):
        if trajectory_id not in cache:
            cache[trajectory_id] = _positions(Screen, trajectory_id)
        return cache[trajectory_id]

    for target in MemoryTarget.objects.filter(evidence__has_key="screen").iterator():
        if _index_of(positions(target.trajectory_id), target.evidence):
            target.save(update_fields=["evidence"])
    for trajectory in Trajectory.objects.filter(
        metadata__has_key="parked_memory_targets"
    ).iterator():
        parked = trajectory.metadata.get("parked_memory_targets") or []
        changed = [
            _index_of(positions(trajectory.pk), p.get("evidence"))
            for p in parked
            if isinstance(p, dict)
        ]
        if any(changed):
            trajectory.save(update_fields=["metadata"])


class Migration(migrations.Migration):
    dependencies = [
        ("trajectories", "0003_jobs_heartbeat"),
    ]

    operations = [
        migrations.RunPython(screen_ids_to_indexes, migrations.RunPython.noop),
    ]

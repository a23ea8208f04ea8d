"""Who annotates what: assignments, double annotation with blind copies, spreading the load.

Each ``do_*`` action commits on return (``transaction.atomic(durable=True)``); the actions
built from others (a double assignment is two assignments and a copy, spreading is many
assignments) call the undecorated helpers, so the whole of it commits or none.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count

from trajectories import events
from trajectories.labels.parts import NOTES, STEP_FIELDS
from trajectories.models import Project, Role, Screen, Status, Step, Trajectory
from trajectories.services import record_event
from trajectories.validation import InvalidData, fail

from ..models import Assignment


@transaction.atomic(durable=True)
def do_make_copy(original: Trajectory, actor) -> Trajectory:
    """A second annotator's copy: the same steps on the same screens (shared blobs), without
    any of the original's labels, under a new uid, linked by ``copy_of``."""
    return _make_copy(original, actor)


def _make_copy(original: Trajectory, actor) -> Trajectory:
    """The recording without its labels: double annotation is blind, so the second annotator
    starts where the first did, not from the first's subgoals, anchors, memory or notes
    (which would make agreement perfect for work nobody has done)."""
    copy = Trajectory.objects.get(pk=original.pk)
    copy.pk = None
    copy.id = None
    copy.uid = uuid.uuid4()
    copy.copy_of = original
    copy.version = 1
    copy.status = Status.ANNOTATING
    copy.final_screen = None
    copy.metadata = {k: v for k, v in copy.metadata.items() if k != NOTES}
    copy.save()
    screens = list(Screen.objects.filter(trajectory=original).order_by("id"))
    old_ids = [s.pk for s in screens]
    for s in screens:
        s.pk = None
        s.trajectory = copy
    Screen.objects.bulk_create(screens)
    new_id = dict(zip(old_ids, (s.pk for s in screens), strict=True))
    unlabelled = {f: Step._meta.get_field(f).get_default() for f in STEP_FIELDS}
    steps = list(Step.objects.filter(trajectory=original).order_by("index"))
    for s in steps:
        s.pk = None
        s.trajectory = copy
        s.screen_id = new_id[s.screen_id]
        for name, value in unlabelled.items():
            setattr(s, name, value)
    Step.objects.bulk_create(steps)
    if original.final_screen_id in new_id:
        copy.final_screen_id = new_id[original.final_screen_id]
        copy.save(update_fields=["final_screen"])
    record_event(
        events.TRAJECTORY_COPIED,
        actor=actor,
        trajectory=copy,
        object_type="Trajectory",
        object_id=copy.pk,
        after={"copy_of": original.pk},
    )
    return copy


def _check_annotator(project: Project, annotator) -> None:
    role = project.role_of(annotator)
    if role not in (Role.ANNOTATOR, Role.ADMIN):
        raise InvalidData(f"{annotator.get_username()} is not an annotator of {project.name}")


def do_assign(trajectory: Trajectory, annotator, actor) -> Assignment:
    """Assign a trajectory to one annotator (again: nothing changes)."""
    _check_annotator(trajectory.project, annotator)
    with transaction.atomic(durable=True):
        return _assign(trajectory, annotator, actor)


def _assign(trajectory: Trajectory, annotator, actor) -> Assignment:
    assignment, created = Assignment.objects.get_or_create(
        trajectory=trajectory, annotator=annotator, defaults={"assigned_by": actor}
    )
    if created:
        record_event(
            events.ASSIGNMENT_ADDED,
            actor=actor,
            trajectory=trajectory,
            object_type="Assignment",
            object_id=assignment.pk,
            after={"annotator": annotator.get_username()},
        )
    return assignment


@transaction.atomic(durable=True)
def do_unassign(trajectory: Trajectory, annotator, actor) -> None:
    deleted, _ = Assignment.objects.filter(trajectory=trajectory, annotator=annotator).delete()
    if deleted:
        record_event(
            events.ASSIGNMENT_REMOVED,
            actor=actor,
            trajectory=trajectory,
            object_type="Assignment",
            before={"annotator": annotator.get_username()},
        )


def do_assign_double(trajectory: Trajectory, first, second, actor) -> Trajectory:
    """Two annotators label the same trajectory independently: ``first`` the original,
    ``second`` a copy. Returns the copy."""
    _check_double(trajectory, first, second)
    with transaction.atomic(durable=True):
        return _assign_double(trajectory, first, second, actor)


def _check_double(trajectory: Trajectory, first, second) -> None:
    if first.pk == second.pk:
        raise InvalidData("double annotation needs two different annotators")
    if trajectory.copy_of_id:
        raise InvalidData("this trajectory is already a copy for double annotation")
    _check_annotator(trajectory.project, first)
    _check_annotator(trajectory.project, second)


def _assign_double(trajectory: Trajectory, first, second, actor) -> Trajectory:
    _assign(trajectory, first, actor)
    copy = _make_copy(trajectory, actor)
    _assign(copy, second, actor)
    return copy


def do_spread_assignments(
    project: Project,
    trajectories: Iterable[Trajectory],
    annotators: list,
    actor,
    per_trajectory: int = 1,
) -> list[Assignment]:
    """Share trajectories out evenly: each goes to the annotators with the fewest assignments
    in the project so far (ties by the order given). A trajectory that already has its
    annotator keeps them (with 2 per trajectory they become the first of the pair); one that
    already has a copy is left alone."""
    if per_trajectory not in (1, 2):
        raise fail("per_trajectory", f"must be 1 or 2, got {per_trajectory!r}")
    if len(annotators) < per_trajectory:
        raise fail("annotators", f"need at least {per_trajectory} annotators")
    for annotator in annotators:
        _check_annotator(project, annotator)
    load = dict(
        Assignment.objects.filter(trajectory__project=project, annotator__in=annotators)
        .values("annotator")
        .annotate(n=Count("id"))
        .values_list("annotator", "n")
    )
    order = {a.pk: i for i, a in enumerate(annotators)}
    users = {a.pk: a for a in annotators}

    def least_loaded(excluding: set[int]):
        free = [a for a in annotators if a.pk not in excluding]
        chosen = min(free, key=lambda a: (load.get(a.pk, 0), order[a.pk]))
        load[chosen.pk] = load.get(chosen.pk, 0) + 1
        return chosen

    made: list[Assignment] = []
    with transaction.atomic(durable=True):
        for trajectory in trajectories:
            if trajectory.project_id != project.pk:
                raise InvalidData(f"trajectory {trajectory.pk} is not in {project.name}")
            if trajectory.copy_of_id or (per_trajectory == 2 and trajectory.copies.exists()):
                continue
            existing = list(
                Assignment.objects.filter(trajectory=trajectory).values_list(
                    "annotator_id", flat=True
                )
            )
            if per_trajectory == 1:
                if not existing:
                    made.append(_assign(trajectory, least_loaded(set()), actor))
                continue
            if existing:
                first = users.get(existing[0]) or get_user_model().objects.get(pk=existing[0])
            else:
                first = least_loaded(set())
            second = least_loaded({first.pk})
            _check_double(trajectory, first, second)
            copy = _assign_double(trajectory, first, second, actor)
            made += list(Assignment.objects.filter(trajectory__in=[trajectory, copy]))
    return made

"""Every write that matters: validate, write in a transaction, record the audit event.

A ``do_*`` action is a unit of work of its own, committed when it returns
(``transaction.atomic(durable=True)``, as Zulip's actions): called inside another transaction
it refuses to run. :func:`do_import_trajectory` is the exception: it is the building block of
imports, which may write many trajectories in one transaction of the caller's;
:func:`do_import_trajectories` writes a chunk of them in one transaction, in bulk.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import orjson
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import DateTimeField, JSONField

from . import events, list_cache
from .blobs import content_sha, put_blobs
from .labels.parts import (
    anchor_row,
    anchor_values,
    link_row,
    link_values,
    memory_target_row,
    memory_target_values,
    subgoal_row,
    subgoal_values,
)
from .models import (
    Anchor,
    AnchorLink,
    AuditEvent,
    Membership,
    MemoryTarget,
    Project,
    Role,
    Screen,
    Status,
    Step,
    Subgoal,
    Task,
    Trajectory,
)
from .records import TaskRecord, TrajectoryRecord
from .validation import (
    InvalidData,
    check_choice,
    check_grading_rule,
    check_trajectory_record,
    fail,
    field_at,
)

COPIED_FROM = "copied_from"  # metadata key: {"id": original uid, "project": its project's name}


def record_event(
    kind: str,
    *,
    actor=None,
    project: Project | None = None,
    trajectory: Trajectory | None = None,
    obj: Any = None,
    object_type: str = "",
    object_id: Any = "",
    before: Any = None,
    after: Any = None,
) -> AuditEvent:
    """Append an audit event; the changed object is ``obj`` or named by type and id.

    ``kind`` is one of the constants of :mod:`trajectories.events`.
    """
    if kind not in events.ALL:
        raise ValueError(f"{kind!r} is not an audit event kind of trajectories.events")
    return AuditEvent.objects.create(
        kind=kind,
        actor=actor if actor is not None and actor.is_authenticated else None,
        project_id=project.pk if project else (trajectory.project_id if trajectory else None),
        trajectory=trajectory,
        object_type=type(obj).__name__ if obj is not None else object_type,
        object_id=str(obj.pk) if obj is not None else str(object_id),
        before=before,
        after=after,
    )


@transaction.atomic(durable=True)
def do_create_project(name: str, owner, description: str = "") -> Project:
    name = name.strip()
    if not name:
        raise InvalidData("name: must not be empty")
    longest = Project._meta.get_field("name").max_length
    if len(name) > longest:
        raise InvalidData(f"name: at most {longest} characters, got {len(name)}")
    project = Project.objects.create(name=name, description=description, created_by=owner)
    Membership.objects.create(project=project, user=owner, role=Role.ADMIN)
    record_event(
        events.PROJECT_CREATED, actor=owner, project=project, obj=project, after={"name": name}
    )
    return project


@transaction.atomic(durable=True)
def do_update_project(project: Project, actor, *, hide_gold: bool | None = None) -> Project:
    """Change a project's settings (its admins: the caller checks the role); one audit event
    with what changed. A setting not given stays as it is."""
    asked = {"hide_gold": hide_gold}
    changed = {
        name: value
        for name, value in asked.items()
        if value is not None and getattr(project, name) != value
    }
    if changed:
        before = {name: getattr(project, name) for name in changed}
        Project.objects.filter(pk=project.pk).update(**changed)
        for name, value in changed.items():
            setattr(project, name, value)
        record_event(
            events.PROJECT_SETTINGS_CHANGED,
            actor=actor,
            project=project,
            obj=project,
            before=before,
            after=changed,
        )
    return project


def _check_keeps_an_admin(project: Project, membership: Membership, change: str) -> None:
    """A project always keeps an admin: the last one cannot be demoted or removed.

    The project's admin rows are locked, so two admins demoting each other at once cannot
    both succeed.
    """
    if membership.role != Role.ADMIN:
        return
    admins = list(
        Membership.objects.select_for_update()
        .filter(project=project, role=Role.ADMIN)
        .values_list("pk", flat=True)
    )
    if admins == [membership.pk]:
        raise InvalidData(
            f"{membership.user.get_username()} is the project's last admin and cannot be "
            f"{change}: make another member admin first"
        )


@transaction.atomic(durable=True)
def do_set_membership(project: Project, user, role: str, actor) -> Membership:
    """Add ``user`` to the project with ``role``, or change their role."""
    return _set_membership(project, user, role, actor)


def _set_membership(project: Project, user, role: str, actor) -> Membership:
    check_choice(role, Role.values, "role")
    membership, created = Membership.objects.get_or_create(
        project=project, user=user, defaults={"role": role}
    )
    before = None if created else {"user": user.get_username(), "role": membership.role}
    if not created:
        if membership.role == role:
            return membership
        if role != Role.ADMIN:
            _check_keeps_an_admin(project, membership, f"made {role}")
        membership.role = role
        membership.save(update_fields=["role"])
    record_event(
        events.MEMBERSHIP_SET,
        actor=actor,
        project=project,
        obj=membership,
        before=before,
        after={"user": user.get_username(), "role": role},
    )
    return membership


@transaction.atomic(durable=True)
def do_add_membership(project: Project, user, role: str, actor) -> Membership:
    """Add a new member; someone already in the project keeps their role (change it instead)."""
    check_choice(role, Role.values, "role")
    existing = Membership.objects.filter(project=project, user=user).first()
    if existing is not None:
        raise InvalidData(
            f"username: {user.get_username()} is already a member of this project "
            f"(as {existing.role}); change their role instead"
        )
    return _set_membership(project, user, role, actor)


@transaction.atomic(durable=True)
def do_remove_membership(project: Project, user, actor) -> None:
    """Take ``user`` out of the project; the last admin stays."""
    membership = Membership.objects.select_related("user").get(project=project, user=user)
    _check_keeps_an_admin(project, membership, "removed")
    before = {"user": user.get_username(), "role": membership.role}
    membership_id = membership.pk
    membership.delete()
    record_event(
        events.MEMBERSHIP_REMOVED,
        actor=actor,
        project=project,
        object_type="Membership",
        object_id=membership_id,
        before=before,
    )


def task_fields(record: TaskRecord) -> dict[str, Any]:
    """A new task's fields (beside its project and uid), as a record gives them."""
    return {
        "goal": record.goal,
        "apps": record.apps,
        "intent": record.intent,
        "difficulty": record.difficulty,
        "gold_answer": record.gold_answer,
        "grading_rule": record.grading_rule,
        "memory_items": record.memory_items,
    }


def get_or_create_task(project: Project, record: TaskRecord) -> Task:
    check_grading_rule(record.grading_rule, "task.grading_rule")
    task, _ = Task.objects.get_or_create(
        project=project, uid=record.uid, defaults=task_fields(record)
    )
    return task


def check_uid_free(project: Project, uid: str, where: str = "") -> Trajectory | None:
    """The project's trajectory with this uid, None if the uid is free; taken elsewhere: refused.

    The message does not name the other project: the importer may not be one of its members.
    """
    existing = Trajectory.objects.filter(uid=uid).first()
    if existing is not None and existing.project_id != project.pk:
        raise fail(
            where,
            f"trajectory {uid} already exists in another project; "
            "use 'import as copies' to import it with a new id",
        )
    return existing


REVIEWED = (Status.APPROVED, Status.REJECTED)


def check_import_authority(record: TrajectoryRecord, actor, role: str | None, where: str) -> None:
    """Refuse imported status and authorship the importer could not give themselves.

    An annotator cannot approve their own work or edit someone else's recording, so they
    may not import an approved trajectory or one credited to another user of this instance.
    ``actor`` None is the command line run without ``--user``: the operator is trusted.
    """
    if actor is None:
        return
    yours = f"you are {'an ' + role if role else 'not a member'}"
    if record.status in REVIEWED and role not in (Role.REVIEWER, Role.ADMIN):
        raise fail(
            field_at(where, "status"),
            "only reviewers and admins of the project may import a trajectory with status "
            f"{record.status!r} ({yours})",
        )
    if (
        record.recorded_by
        and role != Role.ADMIN
        and record.recorded_by != actor.get_username()
        and get_user_model().objects.filter(username=record.recorded_by).exists()
    ):
        raise fail(
            field_at(where, "recorded_by"),
            f"{record.recorded_by!r} is another user of this instance; only admins of the "
            f"project may import a trajectory recorded by someone else ({yours})",
        )


COPY_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "waypoint:import-as-copy")


def copy_uid(project: Project, uid: str) -> str:
    """The uid of the copy of trajectory ``uid`` in ``project``: the same on every import."""
    return str(uuid.uuid5(COPY_NAMESPACE, f"{project.pk}/{uid}"))


def as_copy(
    record: TrajectoryRecord, project: Project, origin_project: str = ""
) -> TrajectoryRecord:
    """The record with a new uid for ``project``; labels and screens kept, the origin recorded.

    The new uid is derived from the project and the original uid, so importing the same
    archive as copies again finds the copies already there instead of making more.
    """
    origin = {"id": record.uid}
    if origin_project:
        origin["project"] = origin_project
    return replace(
        record,
        uid=copy_uid(project, record.uid),
        metadata={**record.metadata, COPIED_FROM: origin},
    )


def do_import_trajectory(
    project: Project, record: TrajectoryRecord, actor=None, where: str = ""
) -> tuple[Trajectory, bool]:
    """Write a whole trajectory, or nothing; importing it again changes nothing.

    Returns the trajectory and whether it was created by this call.
    """
    check_trajectory_record(record, where)
    existing = check_uid_free(project, record.uid, where)
    if existing is not None:
        return existing, False

    # Blob files first (outside the transaction: a stray file is harmless, a row
    # pointing at a missing file is not).
    items = []
    for screen in record.screens:
        items.append((screen.screenshot, screen.screenshot_type))
        if screen.ui_xml is not None:
            items.append((screen.ui_xml, "text/xml"))
    blobs = put_blobs(items)

    users = get_user_model().objects
    recorder = users.filter(username=record.recorded_by).first() if record.recorded_by else None
    with transaction.atomic():
        task = get_or_create_task(project, record.task)
        trajectory = _trajectory_row(project, task, record, {record.recorded_by: recorder})
        trajectory.save(force_insert=True)
        screens = Screen.objects.bulk_create(
            [
                Screen(
                    trajectory=trajectory,
                    screenshot=blobs[content_sha(s.screenshot)],
                    ui_xml=blobs[content_sha(s.ui_xml)] if s.ui_xml is not None else None,
                    width=s.width,
                    height=s.height,
                    package=s.package,
                    activity=s.activity,
                    captured_at=s.captured_at,
                    features=s.features,
                    visible_memory=s.visible_memory,
                )
                for s in record.screens
            ]
        )
        Step.objects.bulk_create(
            [
                Step(
                    trajectory=trajectory,
                    index=s.index,
                    screen=screens[s.screen],
                    action_type=s.action["type"],
                    action={k: v for k, v in s.action.items() if k != "type"},
                    target=s.target,
                    thought=s.thought,
                    summary=s.summary,
                    memory=s.memory,
                    trainable=s.trainable,
                    action_sent_at=s.action_sent_at,
                    settled_at=s.settled_at,
                )
                for s in record.steps
            ]
        )
        if record.final_screen is not None:
            trajectory.final_screen = screens[record.final_screen]
            Trajectory.objects.filter(pk=trajectory.pk).update(final_screen=trajectory.final_screen)
        Subgoal.objects.bulk_create([subgoal_row(trajectory, g) for g in record.subgoals])
        MemoryTarget.objects.bulk_create(
            [memory_target_row(trajectory, m) for m in record.memory_targets]
        )
        anchors = Anchor.objects.bulk_create(
            [anchor_row(trajectory, a, a["id"]) for a in record.anchors]
        )
        ids = {a.key: a.pk for a in anchors}
        AnchorLink.objects.bulk_create([link_row(link, ids) for link in record.anchor_links])
        record_event(
            events.TRAJECTORY_IMPORTED,
            actor=actor,
            trajectory=trajectory,
            obj=trajectory,
            after={"uid": record.uid, "steps": len(record.steps), "source": record.source},
        )
    return trajectory, True


def do_import_trajectories(
    project: Project, items: list[tuple[str, TrajectoryRecord]], actor=None
) -> list[bool]:
    """Write a chunk of trajectories in one transaction, all or nothing; whether each was created.

    The bulk form of :func:`do_import_trajectory`, for records that have passed
    :func:`check_trajectory_record` (an import's first pass): rows go in a few multi-row
    statements per table instead of a dozen queries per trajectory. A trajectory already in the
    project is left as it is. An id taken by another project, or a write the database refuses
    (another writer at work), raises and writes nothing; the caller may then write the chunk one
    trajectory at a time, which names the one at fault.
    """
    taken = {
        str(uid): owner
        for uid, owner in Trajectory.objects.filter(uid__in=[r.uid for _, r in items])
        .values_list("uid", "project_id")
        .iterator()
    }
    for where, record in items:
        if taken.get(record.uid, project.pk) != project.pk:
            check_uid_free(project, record.uid, where)  # raises, in its own words
    created = [record.uid not in taken for _, record in items]
    records = [record for (_, record), new in zip(items, created, strict=True) if new]
    if not records:
        return created

    # Blob files first, outside the transaction, as do_import_trajectory does.
    blob_items = []
    for record in records:
        for screen in record.screens:
            blob_items.append((screen.screenshot, screen.screenshot_type))
            if screen.ui_xml is not None:
                blob_items.append((screen.ui_xml, "text/xml"))
    put_blobs(blob_items)
    names = {r.recorded_by for r in records if r.recorded_by}
    users = get_user_model().objects.filter(**{"username__in": names}) if names else []
    recorders = {user.get_username(): user for user in users}

    with transaction.atomic():
        tasks = _tasks_of(project, records)
        trajectories = Trajectory.objects.bulk_create(
            [_trajectory_row(project, tasks[r.task.uid], r, recorders) for r in records]
        )
        screen_ids = _insert_rows(
            Screen,
            ("trajectory_id", "screenshot_id", "ui_xml_id", "width", "height", "package",
             "activity", "captured_at", "features", "visible_memory"),
            [
                (t.pk, content_sha(s.screenshot),
                 content_sha(s.ui_xml) if s.ui_xml is not None else None, s.width, s.height,
                 s.package, s.activity, s.captured_at, s.features, s.visible_memory)
                for t, r in zip(trajectories, records, strict=True)
                for s in r.screens
            ],
            returning=True,
        )  # fmt: skip
        first, finals = 0, []
        step_rows = []
        for t, r in zip(trajectories, records, strict=True):
            ids = screen_ids[first : first + len(r.screens)]
            first += len(r.screens)
            if r.final_screen is not None:
                finals.append((ids[r.final_screen], t.pk))
            step_rows.extend(
                (t.pk, s.index, ids[s.screen], s.action["type"],
                 {k: v for k, v in s.action.items() if k != "type"}, s.target, s.thought,
                 s.summary, s.memory, s.trainable, s.action_sent_at, s.settled_at)
                for s in r.steps
            )  # fmt: skip
        _insert_rows(
            Step,
            ("trajectory_id", "index", "screen_id", "action_type", "action", "target", "thought",
             "summary", "memory", "trainable", "action_sent_at", "settled_at"),
            step_rows,
        )  # fmt: skip
        if finals:
            table = connection.ops.quote_name(Trajectory._meta.db_table)
            with connection.cursor() as cursor:
                cursor.executemany(f"UPDATE {table} SET final_screen_id = %s WHERE id = %s", finals)
        _import_labels(trajectories, records)
        AuditEvent.objects.bulk_create(
            [
                AuditEvent(
                    kind=events.TRAJECTORY_IMPORTED,
                    actor=actor if actor is not None and actor.is_authenticated else None,
                    project_id=project.pk,
                    trajectory=t,
                    object_type="Trajectory",
                    object_id=str(t.pk),
                    after={"uid": r.uid, "steps": len(r.steps), "source": r.source},
                )
                for t, r in zip(trajectories, records, strict=True)
            ]
        )
        list_cache.changed({project.pk})
    return created


def _tasks_of(project: Project, records: list[TrajectoryRecord]) -> dict[str, Task]:
    """The project's tasks of these records by uid; the missing ones created, as
    :func:`get_or_create_task` would (the first record naming a task defines it)."""
    tasks = {
        t.uid: t
        for t in Task.objects.filter(project=project, uid__in={r.task.uid for r in records})
    }
    missing: dict[str, Task] = {}
    for record in records:
        task = record.task
        if task.uid not in tasks and task.uid not in missing:
            missing[task.uid] = Task(project=project, uid=task.uid, **task_fields(task))
    if missing:
        tasks.update({t.uid: t for t in Task.objects.bulk_create(list(missing.values()))})
    return tasks


def _trajectory_row(
    project: Project, task: Task, record: TrajectoryRecord, recorders: dict[str, Any]
) -> Trajectory:
    device = record.device
    return Trajectory(
        project=project,
        task=task,
        uid=record.uid,
        device_serial=device.get("serial", ""),
        device_model=device.get("model", ""),
        android_version=device.get("android_version", ""),
        screen_width=device.get("width", 0),
        screen_height=device.get("height", 0),
        density=device.get("density", 0),
        recorded_by=recorders.get(record.recorded_by) if record.recorded_by else None,
        recorder_name=record.recorded_by or "",
        source=record.source,
        status=record.status,
        outcome=record.outcome,
        step_count=len(record.steps),
        metadata=record.metadata,
        recorded_at=record.recorded_at,
    )


def _import_labels(trajectories: list[Trajectory], records: list[TrajectoryRecord]) -> None:
    """The chunk's subgoals, memory targets, anchors and links, with the fields the row
    builders of :mod:`trajectories.labels.parts` give, inserted as plain rows."""
    pairs = list(zip(trajectories, records, strict=True))
    _insert_dicts(
        Subgoal,
        [{"trajectory_id": t.pk, **subgoal_values(g)} for t, r in pairs for g in r.subgoals],
    )
    _insert_dicts(
        MemoryTarget,
        [
            {"trajectory_id": t.pk, **memory_target_values(m)}
            for t, r in pairs
            for m in r.memory_targets
        ],
    )
    anchors = [
        {"trajectory_id": t.pk, **anchor_values(a, a["id"])} for t, r in pairs for a in r.anchors
    ]
    ids = _insert_dicts(Anchor, anchors, returning=True)
    by_trajectory: dict[int, dict[str, int]] = {}
    for anchor, pk in zip(anchors, ids, strict=True):
        by_trajectory.setdefault(anchor["trajectory_id"], {})[anchor["key"]] = pk
    _insert_dicts(
        AnchorLink,
        [link_values(x, by_trajectory.get(t.pk, {})) for t, r in pairs for x in r.anchor_links],
    )


def _insert_dicts(model: Any, rows: list[dict[str, Any]], *, returning: bool = False) -> list[int]:
    """Rows given as dicts of one table's fields, each in the same order (a row builder's),
    inserted as plain rows."""
    if not rows:
        return []
    fields = tuple(rows[0])
    unfilled = {f.attname for f in model._meta.concrete_fields if not f.primary_key} - {*fields}
    if unfilled:  # a model instance would fill them with their defaults: a builder's to give
        raise ValueError(f"{model.__name__} rows lack {', '.join(sorted(unfilled))}")
    return _insert_rows(model, fields, [tuple(row.values()) for row in rows], returning=returning)


ROWS_PER_STATEMENT = 500  # x at most 12 columns: within every database's parameter limit


def _insert_rows(
    model: Any, fields: tuple[str, ...], rows: list[tuple], *, returning: bool = False
) -> list[int]:
    """Insert plain rows in multi-row statements; their new ids, in order, if ``returning``.

    Values are prepared for the database by the fields' own rules (JSON, times), without
    building a model instance per row: for the tables an import fills by the thousand.
    """
    if not rows:
        return []
    meta = model._meta
    columns = [meta.get_field(name) for name in fields]
    prepare = [_preparer(field) for field in columns]
    table = connection.ops.quote_name(meta.db_table)
    names = ", ".join(connection.ops.quote_name(field.column) for field in columns)
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"
    if connection.vendor == "postgresql":
        return _copy_rows(meta, [field.column for field in columns], prepare, rows, returning)
    pk = connection.ops.quote_name(meta.pk.column)
    ids: list[int] = []
    with connection.cursor() as cursor:
        for start in range(0, len(rows), ROWS_PER_STATEMENT):
            batch = rows[start : start + ROWS_PER_STATEMENT]
            params = [
                value if convert is None else convert(value)
                for row in batch
                for convert, value in zip(prepare, row, strict=True)
            ]
            sql = f"INSERT INTO {table} ({names}) VALUES {', '.join([one] * len(batch))}"
            if returning:
                cursor.execute(f"{sql} RETURNING {pk}", params)
                ids.extend(row[0] for row in cursor.fetchall())
            else:
                cursor.execute(sql, params)
    return ids


def _copy_rows(
    meta: Any, columns: list[str], prepare: list[Any], rows: list[tuple], returning: bool
) -> list[int]:
    """PostgreSQL: rows in by ``COPY`` (psycopg 3), which parses no statement per row; the ids,
    if wanted, are taken from the table's sequence first and written with the rows."""
    q = connection.ops.quote_name
    ids: list[int] = []
    if returning:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                [meta.db_table, meta.pk.column, len(rows)],
            )
            ids = [row[0] for row in cursor.fetchall()]
        columns = [meta.pk.column, *columns]
        prepare = [None, *prepare]
        rows = [(pk, *row) for pk, row in zip(ids, rows, strict=True)]
    names = ", ".join(q(column) for column in columns)
    connection.ensure_connection()
    with connection.connection.cursor() as cursor:
        with cursor.copy(f"COPY {q(meta.db_table)} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(
                    [
                        value if convert is None else convert(value)
                        for convert, value in zip(prepare, row, strict=True)
                    ]
                )
    return ids


def _preparer(field: Any) -> Any:
    """How a value of ``field`` goes to the database: None for as it is."""
    ops = connection.ops
    if isinstance(field, JSONField):
        encoder, adapt = field.encoder, ops.adapt_json_value
        if encoder is None:
            return lambda value: None if value is None else _json_text(value, adapt)
        return lambda value: None if value is None else adapt(value, encoder)
    if isinstance(field, DateTimeField):
        return ops.adapt_datetimefield_value
    return None


# Types orjson would write where json refuses them: refused here too, so json says no.
_AS_JSON_DOES = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _json_text(value: Any, adapt: Any) -> Any:
    """A JSON column's value (of a field without an encoder of its own) as orjson writes it:
    the data ``json`` would write, compact and in UTF-8, a few times faster. What orjson
    refuses (an integer beyond 64 bits, a type ``json`` does not know) or may write otherwise
    (``NaN`` and the infinities, as ``null``) is the database's own adaptation, ``adapt``."""
    try:
        text = orjson.dumps(value, option=_AS_JSON_DOES)
    except TypeError:  # orjson.JSONEncodeError is one
        return adapt(value, None)
    if b"null" in text:  # maybe a NaN or an infinity: orjson writes them so
        return adapt(value, None)
    return text.decode()

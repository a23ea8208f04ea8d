"""How far a project is: trajectories per status, the share annotated and approved, and each
person's work and time spent, read from assignments and the audit trail.

A trajectory's submitted and approved work is credited to its annotators; one nobody is
assigned to is credited to whoever last submitted it (recorded and labelled on the spot, or
assigned and later unassigned).

Four queries whatever the project's size (statuses, assignments, unassigned submissions, work
per person), each answering a few rows; time spent is the sum of each person's sessions: runs
of work events no more than ``WAYPOINT_SESSION_GAP_S`` apart, each counted from its first event
to its last.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Count, Exists, OuterRef, Subquery

from trajectories import events
from trajectories.models import AuditEvent, Project, Status, Trajectory
from trajectories.selectors import ANNOTATED, StatusShare, status_counts, status_shares

from .models import Assignment


@dataclass
class PersonWork:
    username: str
    assigned: int = 0
    submitted: int = 0  # of theirs (assigned, or unassigned and submitted by them): handed on
    approved: int = 0
    changes: int = 0  # work events: labels, recording, review
    touched: int = 0  # trajectories with a change of theirs
    seconds: float = 0.0
    sessions: int = 0
    changes_percent: float = 0.0  # of the busiest person's, for the bars
    time_percent: float = 0.0

    @property
    def time_spent(self) -> str:
        return duration_text(self.seconds)


@dataclass
class ProjectProgress:
    total: int
    by_status: list[StatusShare]
    annotated: int
    approved: int
    people: list[PersonWork]
    seconds: float

    @property
    def annotated_percent(self) -> float:
        return 100 * self.annotated / self.total if self.total else 0.0

    @property
    def approved_percent(self) -> float:
        return 100 * self.approved / self.total if self.total else 0.0

    @property
    def time_spent(self) -> str:
        return duration_text(self.seconds)


def duration_text(seconds: float) -> str:
    """``1 h 05 min``, ``12 min``, ``40 s``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


# Each work event with the seconds since the same person's previous one; the database adds
# them up per person (a window function), so the page reads one row per person, not per event.
_SECONDS_BETWEEN = {
    "sqlite": "(julianday(e.at) - julianday(LAG(e.at) OVER w)) * 86400.0",
    "postgresql": "EXTRACT(EPOCH FROM e.at - LAG(e.at) OVER w)",
}
_WORK_SQL = """
SELECT u.{username}, COUNT(*), COUNT(DISTINCT g.trajectory_id),
       SUM(CASE WHEN g.gap IS NULL OR g.gap > %s THEN 1 ELSE 0 END),
       SUM(CASE WHEN g.gap <= %s THEN g.gap ELSE 0 END)
FROM (
    SELECT e.actor_id, e.trajectory_id, {gap} AS gap
    FROM {events} e
    WHERE e.project_id = %s AND e.actor_id IS NOT NULL AND e.kind IN ({kinds})
    WINDOW w AS (PARTITION BY e.actor_id ORDER BY e.at, e.id)
) g JOIN {users} u ON u.{user_pk} = g.actor_id
GROUP BY u.{username}
"""


def work_by_person(project: Project, gap_s: float) -> list[tuple[str, int, int, int, float]]:
    """(username, changes, trajectories touched, sessions, seconds) per person who worked on
    the project: sessions are runs of work events at most ``gap_s`` apart, each counted from
    its first event to its last (the pauses between them are not time spent)."""
    users = get_user_model()._meta
    kinds = sorted(events.WORK)
    sql = _WORK_SQL.format(
        username=connection.ops.quote_name(users.get_field(users.model.USERNAME_FIELD).column),
        gap=_SECONDS_BETWEEN[connection.vendor],
        events=connection.ops.quote_name(AuditEvent._meta.db_table),
        kinds=", ".join(["%s"] * len(kinds)),
        users=connection.ops.quote_name(users.db_table),
        user_pk=connection.ops.quote_name(users.pk.column),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [gap_s, gap_s, project.pk, *kinds])
        return [
            (name, n, touched, sessions, float(seconds or 0))
            for name, n, touched, sessions, seconds in cursor.fetchall()
        ]


def unassigned_submissions(project: Project) -> list[tuple[str, str, int]]:
    """(username, status, count) of the project's handed-on trajectories that nobody is
    assigned to, by who last submitted them."""
    last_submitter = (
        AuditEvent.objects.filter(trajectory=OuterRef("pk"), kind=events.TRAJECTORY_SUBMITTED)
        .exclude(actor=None)
        .order_by("-at", "-id")
        .values("actor__username")[:1]
    )
    rows = (
        Trajectory.objects.filter(project=project, status__in=ANNOTATED)
        .exclude(Exists(Assignment.objects.filter(trajectory=OuterRef("pk"))))
        .annotate(submitter=Subquery(last_submitter))
        .exclude(submitter=None)
        .order_by()
        .values_list("submitter", "status")
        .annotate(n=Count("pk"))
    )
    return list(rows)


def project_progress(project: Project, gap_s: float | None = None) -> ProjectProgress:
    """The project's progress (originals only: second annotators' copies are work, not items)."""
    gap_s = settings.WAYPOINT_SESSION_GAP_S if gap_s is None else gap_s
    counts = status_counts(project)
    total = sum(counts.values())
    by_status = status_shares(counts)

    people: dict[str, PersonWork] = {}

    def person(name: str) -> PersonWork:
        return people.setdefault(name, PersonWork(name))

    assigned = (
        Assignment.objects.filter(trajectory__project=project)
        .order_by()
        .values_list("annotator__username", "trajectory__status")
        .annotate(n=Count("pk"))
    )
    for name, status, n in assigned:
        work = person(name)
        work.assigned += n
        work.submitted += n if status in ANNOTATED else 0
        work.approved += n if status == Status.APPROVED else 0

    for name, status, n in unassigned_submissions(project):
        work = person(name)
        work.submitted += n
        work.approved += n if status == Status.APPROVED else 0

    for name, changes, touched, sessions, seconds in work_by_person(project, gap_s):
        work = person(name)
        work.changes, work.touched, work.sessions, work.seconds = (
            changes,
            touched,
            sessions,
            seconds,
        )

    listed = sorted(people.values(), key=lambda p: (-p.changes, -p.assigned, p.username))
    most_changes = max((p.changes for p in listed), default=0) or 1
    most_time = max((p.seconds for p in listed), default=0) or 1
    for p in listed:
        p.changes_percent = 100 * p.changes / most_changes
        p.time_percent = 100 * p.seconds / most_time
    return ProjectProgress(
        total=total,
        by_status=by_status,
        annotated=sum(counts.get(s, 0) for s in ANNOTATED),
        approved=counts.get(Status.APPROVED, 0),
        people=listed,
        seconds=sum(p.seconds for p in listed),
    )

"""How far a project is: trajectories per status, the share annotated and approved, and each
person's work and time spent, read from assignments and the audit trail.

Three queries whatever the project's size (statuses, assignments, work events); time spent is
the sum of each person's sessions: runs of work events no more than
``WAYPOINT_SESSION_GAP_S`` apart, each counted from its first event to its last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db.models import Count

from trajectories import events
from trajectories.models import AuditEvent, Project, Status
from trajectories.selectors import ANNOTATED, StatusShare, status_counts, status_shares

from .models import Assignment


@dataclass
class PersonWork:
    username: str
    assigned: int = 0
    submitted: int = 0  # of the assigned: in review or decided
    approved: int = 0
    changes: int = 0  # work events: labels, recording, review
    trajectories: set[int] = field(default_factory=set)
    seconds: float = 0.0
    sessions: int = 0
    changes_percent: float = 0.0  # of the busiest person's, for the bars
    time_percent: float = 0.0

    @property
    def touched(self) -> int:
        return len(self.trajectories)

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


def add_sessions(person: PersonWork, times: list[datetime], gap_s: float) -> None:
    """Add the sessions in ``times`` (sorted) to ``person``'s time spent."""
    start = previous = None
    for at in times:
        if previous is None or (at - previous).total_seconds() > gap_s:
            if start is not None:
                person.seconds += (previous - start).total_seconds()
            start = at
            person.sessions += 1
        previous = at
    if start is not None:
        person.seconds += (previous - start).total_seconds()


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

    work_events = (
        AuditEvent.objects.filter(project=project, kind__in=events.WORK, actor__isnull=False)
        .order_by("actor_id", "at", "id")
        .values_list("actor__username", "at", "trajectory_id")
    )
    times: dict[str, list[datetime]] = {}
    for name, at, trajectory_id in work_events.iterator(chunk_size=2000):
        work = person(name)
        work.changes += 1
        if trajectory_id is not None:
            work.trajectories.add(trajectory_id)
        times.setdefault(name, []).append(at)
    for name, stamps in times.items():
        add_sessions(people[name], stamps, gap_s)

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

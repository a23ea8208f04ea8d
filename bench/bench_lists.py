"""How the list pages and the progress page scale: `python bench/bench_lists.py [trajectories]`.

Builds a project of N trajectories (default 2,000; 5 screens and an ``open_app`` step each,
half of them in a ShopMate-like app), one assignment each across 10 annotators, and 25 work
events per trajectory spread over days. Then, in-process through Django's test client (server
time, no network), median of 10:

- the project's trajectory list: newest first, sorted by goal, by steps descending, and with
  the app filter matching part of a package (``shopmate``) and part of a label (``Karten``);
- the projects page sorted by trajectory count;
- the progress page (statuses, per-person work and sessions from every work event), with its
  query count at N/10 and N trajectories (it must not grow).

Uses a throwaway SQLite database unless DATABASE_URL is set.
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import UTC, datetime, timedelta

from scratch import scratch_django  # bench/scratch.py, beside this script

RUNS = 10
EVENTS_PER_TRAJECTORY = 25


def setup() -> None:
    scratch_django("waypoint-bench-lists-")


def build(project, users, start: int, count: int) -> None:
    """``count`` more trajectories with screens, a step, an assignment and work events."""
    from annotate.models import Assignment
    from trajectories import events
    from trajectories.models import AuditEvent, Blob, Screen, Step, Task, Trajectory

    blob, _ = Blob.objects.get_or_create(
        sha256="0" * 64, defaults={"size": 1, "content_type": "image/png"}
    )
    statuses = ["annotating", "annotating", "in_review", "approved", "rejected"]
    tasks = Task.objects.bulk_create(
        Task(project=project, uid=f"t{i}", goal=f"Task {i:05d}: find the price of item {i}")
        for i in range(start, start + count)
    )
    made = Trajectory.objects.bulk_create(
        Trajectory(
            project=project,
            task=task,
            status=statuses[i % len(statuses)],
            step_count=1 + i % 40,
            recorder_name=users[i % len(users)].username,
        )
        for i, task in zip(range(start, start + count), tasks, strict=True)
    )
    packages = ["com.waypoint.shopmate", "de.example.navi"]
    screens = Screen.objects.bulk_create(
        Screen(
            trajectory=t,
            screenshot=blob,
            width=540,
            height=1200,
            package=packages[(start + n) % 2] if k else "com.android.launcher3",
        )
        for n, t in enumerate(made)
        for k in range(5)
    )
    labels = ["ShopMate", "Karten"]
    Step.objects.bulk_create(
        Step(
            trajectory=t,
            index=0,
            screen=screens[5 * n],
            action_type="open_app",
            action={"package": packages[(start + n) % 2], "app_label": labels[(start + n) % 2]},
        )
        for n, t in enumerate(made)
    )
    Assignment.objects.bulk_create(
        Assignment(trajectory=t, annotator=users[(start + n) % len(users)])
        for n, t in enumerate(made)
    )
    t0 = datetime(2026, 11, 1, 8, tzinfo=UTC)
    # The events' own times, not now: bulk_create would stamp auto_now_add fields.
    AuditEvent._meta.get_field("at").auto_now_add = False
    AuditEvent.objects.bulk_create(
        AuditEvent(
            project=project,
            trajectory=t,
            actor=users[(start + n) % len(users)],
            kind=events.STEP_UPDATED,
            at=t0 + timedelta(minutes=3 * ((start + n) * EVENTS_PER_TRAJECTORY + e)),
        )
        for n, t in enumerate(made)
        for e in range(EVENTS_PER_TRAJECTORY)
    )


def timed(client, url: str) -> tuple[float, int]:
    """Median server time (ms) of ``url`` and its query count."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times = []
    for _ in range(RUNS):
        began = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - began) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    return statistics.median(times), len(queries)


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from trajectories.services import do_create_project, do_set_membership

    users_model = get_user_model()
    admin = users_model.objects.create_user("admin", password="bench-password")
    project = do_create_project("Bench project", admin)
    users = [users_model.objects.create_user(f"annotator{i}") for i in range(10)]
    for user in users:
        do_set_membership(project, user, "annotator", admin)
    client = Client()
    client.force_login(admin)

    first = total // 10
    build(project, users, 0, first)
    progress = f"/projects/{project.pk}/progress/"
    _, few_queries = timed(client, progress)
    build(project, users, first, total - first)

    base = f"/projects/{project.pk}/trajectories/"
    print(f"{total} trajectories, {total * EVENTS_PER_TRAJECTORY} work events, 10 annotators")
    for name, url in [
        ("list, newest first", base),
        ("list, sort=goal", base + "?sort=goal"),
        ("list, sort=-steps", base + "?sort=-steps"),
        ("list, app=shopmate", base + "?app=shopmate"),
        ("list, app=Karten (a label)", base + "?app=Karten"),
        ("projects, sort=-trajectories", "/?sort=-trajectories"),
        ("progress page", progress),
    ]:
        ms, queries = timed(client, url)
        print(f"  {name:30s} median {ms:7.1f} ms  {queries:2d} queries")
    _, many_queries = timed(client, progress)
    print(
        f"  progress queries: {few_queries} at {first} trajectories, {many_queries} at {total}"
        f" ({'constant' if few_queries == many_queries else 'GROWS'})"
    )


if __name__ == "__main__":
    main()

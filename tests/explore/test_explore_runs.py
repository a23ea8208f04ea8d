"""An exploration walked by a real Celery worker on the virtual device: its trajectories, its
app graph, the same graph twice for the same seed, a stop and a resume that change nothing,
and the deny-list."""

from __future__ import annotations

import time

import pytest

from devices.models import Lease
from explore.models import Exploration
from explore.services import (
    do_resume_exploration,
    do_set_deny_list,
    do_start_exploration,
    do_stop_exploration,
)
from tests.conftest import wait_for_job
from tests.explore.helpers import graph_shape, walk_shape
from trajectories.models import Step, Trajectory

pytestmark = [pytest.mark.worker, pytest.mark.usefixtures("agent_worker")]
MAIL = "com.waypoint.mailbox"
CONTACTS = "com.waypoint.contacts"
PARCELS = "com.waypoint.parceltrack"


def explored(project, user, pool, app, budget, **options) -> Exploration:
    x = do_start_exploration(
        project, user, app=app, serial=pool.serial, budget=budget, seed=3, **options
    )
    job = wait_for_job(x.job_id, timeout=240)
    assert job.status == "succeeded", job.message
    x.refresh_from_db()
    return x


@pytest.mark.django_db(transaction=True)
def test_exploring_mail_maps_its_inbox_and_message_and_makes_a_graph_version(pool, project, alice):
    x = explored(project, alice, pool, MAIL, "60")
    assert x.status == "finished"
    assert x.message == "nothing left to try"  # mail is small: the walk ends before its budget
    assert x.states == 2 and x.transitions >= 4 and x.frontier_size == 0
    inbox, message = x.frontier["nodes"][:2]
    assert inbox["description"].startswith("Inbox: showing “")
    assert "a list of 12 mail rows" in inbox["description"]
    assert message["path"] == [inbox["candidates"][1]["key"]]  # the first mail row opened it
    # Deleting a mail is on the default deny-list: refused, never tapped.
    refused = [c["label"] for c in message["candidates"] if c["status"] == "refused"]
    assert refused == ["Tap “🗑”"]

    episodes = Trajectory.objects.filter(task__uid=f"exploration-{x.pk}").order_by("created_at")
    assert {t.source for t in episodes} == {"exploration"}
    assert [str(t.uid) for t in episodes] == x.frontier["episodes"]
    first = Step.objects.filter(trajectory=episodes[0]).order_by("index")
    assert first[0].action_type == "open_app" and first[1].summary == "Tap “⌕”"
    assert not Lease.objects.exists()  # the device is given back

    graph = graph_shape(x.graph)
    assert x.graph.app == MAIL and x.graph.version == 1
    assert len(graph["nodes"]) >= 2 and any(e[3] == "Tap mail_0" for e in graph["edges"])


@pytest.mark.django_db(transaction=True)
def test_the_same_seed_gives_the_same_graph_and_a_stopped_exploration_resumes_to_it(
    pool, project, alice
):
    first = explored(project, alice, pool, CONTACTS, "40")
    second = explored(project, alice, pool, CONTACTS, "40")
    assert first.steps == 40 and first.states >= 2
    assert walk_shape(first) == walk_shape(second)
    assert graph_shape(first.graph) == graph_shape(second.graph)

    third = do_start_exploration(
        project, alice, app=CONTACTS, serial=pool.serial, budget="40", seed=3
    )
    deadline = time.monotonic() + 120
    while Exploration.objects.get(pk=third.pk).steps < 8:  # stopped mid-episode
        assert time.monotonic() < deadline, "the exploration never got going"
        time.sleep(0.1)
    do_stop_exploration(third, alice)
    wait_for_job(third.job_id, timeout=120)
    third.refresh_from_db()
    assert third.status == "stopped", third.message
    assert third.steps < 40 and third.graph is None
    interrupted = Trajectory.objects.filter(
        task__uid=f"exploration-{third.pk}", status="interrupted"
    )
    assert interrupted.count() == 1  # the episode under way is kept, and walked again

    third = do_resume_exploration(third, alice)
    wait_for_job(third.job_id, timeout=240)
    third.refresh_from_db()
    assert third.status == "finished", third.message
    assert walk_shape(third) == walk_shape(first)
    assert graph_shape(third.graph) == graph_shape(first.graph)


@pytest.mark.django_db(transaction=True)
def test_a_denied_element_is_never_acted_on_unless_allowed(pool, project, alice):
    do_set_deny_list(project, PARCELS, ["Track", "id:nothing_here"])
    denied = explored(project, alice, pool, PARCELS, "20")
    track_page = denied.frontier["nodes"][0]  # where the app opens
    statuses = {c["label"]: c["status"] for c in track_page["candidates"]}
    assert statuses["Tap “Track” (track)"] == "refused"
    summaries = set(
        Step.objects.filter(trajectory__task__uid=f"exploration-{denied.pk}").values_list(
            "summary", flat=True
        )
    )
    assert "Tap “Track” (track)" not in summaries

    allowed = explored(project, alice, pool, PARCELS, "20", allow=["Track"])
    summaries = set(
        Step.objects.filter(trajectory__task__uid=f"exploration-{allowed.pk}").values_list(
            "summary", flat=True
        )
    )
    assert "Tap “Track” (track)" in summaries

"""A trajectory's labels kept by the version they were read at: every change shows at once.

These tests commit (``transaction=True``), as a real server does: inside a transaction the
labels are always read.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.authtoken.models import Token

from tests.trajectories.builders import make_record
from trajectories.labels.cache import READERS, kept_at_version, labels_at_version
from trajectories.labels.edits import (
    do_add_anchor,
    do_add_memory_target,
    do_update_step,
    do_update_subgoal,
)
from trajectories.labels.parts import all_labels, label_parts
from trajectories.models import Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def imported(project):
    trajectory, _ = do_import_trajectory(project, make_record(steps=3, seed=1, recorded_by="bob"))
    return trajectory


def queries(read) -> tuple[int, object]:
    with CaptureQueriesContext(connection) as captured:
        value = read()
    return len(captured), value


def test_a_second_read_at_the_same_version_asks_the_database_nothing(imported):
    fresh = label_parts(imported)
    # subgoals, memory targets, anchors with their links; then: still at that version?
    assert queries(lambda: labels_at_version(imported)) == (4, fresh)
    again = Trajectory.objects.get(pk=imported.pk)  # another request, same version
    assert queries(lambda: labels_at_version(again)) == (0, fresh)


def test_what_a_reader_changes_is_not_kept(imported):
    labels_at_version(imported)["subgoals"].clear()
    assert labels_at_version(imported)["subgoals"] == label_parts(imported)["subgoals"] != []


def test_an_edit_shows_at_the_next_read(imported, bob):
    labels_at_version(imported)
    subgoal = imported.subgoals.first()
    do_update_subgoal(imported, bob, imported.version, subgoal.pk, {"text": "Pay the order"})
    loaded = Trajectory.objects.get(pk=imported.pk)
    texts = [g["text"] for g in labels_at_version(loaded)["subgoals"]]
    assert "Pay the order" in texts
    assert labels_at_version(loaded) == label_parts(loaded)


def test_labels_read_after_an_edit_are_not_filed_under_the_version_before_it(imported, bob):
    """A request loaded the trajectory, then someone's edit committed, then the request read
    the labels: it shows what it read, but the next request at the old version reads again."""
    stale = Trajectory.objects.get(pk=imported.pk)
    current = Trajectory.objects.get(pk=imported.pk)
    do_add_memory_target(current, bob, current.version, key="price", value="$4", encode_step=1)
    keys = [m["key"] for m in labels_at_version(stale)["memory_targets"]]
    assert "price" in keys  # what the database holds now
    count, _ = queries(lambda: labels_at_version(stale))
    assert count == 4  # not kept under the version it was loaded at


def test_what_was_kept_before_an_edit_is_kept_after_it_with_the_part_it_changed(imported, bob):
    """The edit's answer and the editor's next page read no labels: the part an edit changed
    (read under the row lock) replaces that part of what was kept at the version before."""
    everything = tuple(READERS)
    kept_at_version(imported, *everything)
    subgoal = imported.subgoals.first()
    edits = [
        lambda t: do_update_step(t, bob, t.version, 1, {"memory": "the price is $4"}),
        lambda t: do_update_subgoal(t, bob, t.version, subgoal.pk, {"text": "Pay the order"}),
        lambda t: do_add_memory_target(t, bob, t.version, key="price", value="$4", encode_step=1),
        lambda t: do_add_anchor(t, bob, t.version, step=2, type="context_info", content="$4"),
    ]
    for edit in edits:
        edit(Trajectory.objects.get(pk=imported.pk))
        loaded = Trajectory.objects.get(pk=imported.pk)
        fresh = {name: read(loaded) for name, read in READERS.items()}
        assert queries(lambda loaded=loaded: kept_at_version(loaded, *everything)) == (0, fresh)


def test_without_the_cache_every_read_asks(imported, settings):
    settings.WAYPOINT_LABELS_CACHE_S = 0
    labels_at_version(imported)
    assert queries(lambda: labels_at_version(imported))[0] == 3


def test_the_workspace_and_the_labels_api_follow_an_edit_through_the_api(imported, alice, client):
    token = Token.objects.create(user=alice)
    client.force_login(alice)
    api = {"Authorization": f"Token {token.key}"}
    labels_url = reverse("api-labels", args=[imported.pk])
    page_url = f"/trajectories/{imported.pk}/workspace/?step=1"
    before = client.get(labels_url, headers=api).json()
    assert client.get(page_url).status_code == 200  # both kept now
    assert before == {**before, **all_labels(imported)}
    subgoal = before["subgoals"][0]
    answer = client.patch(
        reverse("api-subgoal", args=[imported.pk, subgoal["id"]]),
        {"version": before["version"], "text": "Open the basket"},
        content_type="application/json",
        headers=api,
    )
    assert answer.status_code == 200, answer.content
    after = client.get(labels_url, headers=api).json()
    assert after["version"] == before["version"] + 1
    assert after["subgoals"][0]["text"] == "Open the basket"
    assert after == answer.json()
    assert "Open the basket" in client.get(page_url).content.decode()

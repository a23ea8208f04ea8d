"""What the workspace costs per request: a fixed number of queries, whatever the labels."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate import services as s
from tests.annotate.conftest import blank_record
from trajectories.labels import edits
from trajectories.models import Screen
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db

# The session, its user; the trajectory (with its project, task, the user's role, and
# whether it has assignees, the user among them, comments, proposals and edits to undo or
# redo), subgoals, memory targets, anchors with their links, history, steps (the selected one
# among them); then one query each for the comments and the proposals when it has any.
BARE_PAGE_QUERIES = 8
FULL_PAGE_QUERIES = BARE_PAGE_QUERIES + 2


def workspace_queries(client, trajectory, **headers) -> int:
    url = f"/trajectories/{trajectory.pk}/workspace/?step=1"
    client.get(url, headers=headers)  # warm the session
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, headers=headers)
    assert response.status_code == 200
    return len(captured)


def test_an_assigned_annotator_is_known_with_the_trajectory(client, blank, bob):
    client.force_login(bob)
    assert workspace_queries(client, blank) == BARE_PAGE_QUERIES
    # Switching steps re-renders the panels only: no filmstrip, the selected step on its own.
    assert workspace_queries(client, blank, **{"HX-Request": "true"}) == BARE_PAGE_QUERIES


def test_the_page_asks_only_for_the_kinds_of_things_the_trajectory_has(client, project, alice, bob):
    trajectory, _ = do_import_trajectory(project, blank_record(steps=4, seed=33))
    client.force_login(alice)
    url = f"/trajectories/{trajectory.pk}/workspace/?step=1"
    assert workspace_queries(client, trajectory) == BARE_PAGE_QUERIES
    html = client.get(url).content.decode()
    assert 'id="ws-undo" disabled' in html and 'id="ws-redo" disabled' in html
    # Each kind it gains is read, and shown, from then on.
    trajectory.refresh_from_db()
    edits.do_add_anchor(
        trajectory, alice, trajectory.version, step=1, type="context_info", content="kept"
    )
    s.do_comment(trajectory, alice, 1, "check the price on step 1")
    assert workspace_queries(client, trajectory) == BARE_PAGE_QUERIES + 1
    html = client.get(url).content.decode()
    assert "check the price on step 1" in html
    assert 'id="ws-undo" disabled' not in html and 'id="ws-redo" disabled' in html
    s.do_assign(trajectory, bob, alice)  # an admin needs no assignees to edit; bob does
    client.force_login(bob)
    assert workspace_queries(client, trajectory) == BARE_PAGE_QUERIES + 1


def test_the_workspace_costs_the_same_with_many_labels(client, project, alice, bob):
    few, _ = do_import_trajectory(project, blank_record(steps=12, seed=31))
    many, _ = do_import_trajectory(project, blank_record(steps=12, seed=32))
    for t in (few, many):
        s.do_assign(t, bob, alice)
    s.do_comment(few, alice, 0, "one comment")  # both have comments: one, or six
    for n in range(6):  # subgoals, anchors, memory, comments and history on one of them
        many.refresh_from_db()
        edits.do_split_subgoal(many, bob, many.version, n * 2)
        many.refresh_from_db()
        edits.do_add_anchor(many, bob, many.version, step=n, type="context_info", content=f"c{n}")
        many.refresh_from_db()
        edits.do_add_memory_target(many, bob, many.version, key=f"k{n}", value="v", encode_step=n)
        s.do_comment(many, alice, n, f"look at step {n}")
    client.force_login(bob)
    assert workspace_queries(client, many) == workspace_queries(client, few)


def test_coordinates_are_plain_numbers_whatever_the_number_format(client, blank, bob, settings):
    # The page is SVG and data attributes: "1,080" there would break the drawing.
    settings.USE_THOUSAND_SEPARATOR = True
    Screen.objects.filter(trajectory=blank).update(width=1080, height=2400)
    client.force_login(bob)
    html = client.get(f"/trajectories/{blank.pk}/workspace/?step=1").content.decode()
    assert 'viewBox="0 0 1080 2400"' in html
    assert 'width="1080" height="2400"' in html
    assert "1,080" not in html and "2,400" not in html

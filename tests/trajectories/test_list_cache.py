"""The trajectory lists (page and API) kept between requests: every change shows at once.

These tests commit (``transaction=True``), as a real server does: inside a transaction the
cache is not used, and a change counts for the lists once it is committed.
"""

from __future__ import annotations

from unittest.mock import ANY

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.authtoken.models import Token

from annotate.services.review import do_submit
from tests.trajectories.builders import make_record
from trajectories.labels.edits import do_update_subgoal
from trajectories.models import Project, Task, Trajectory
from trajectories.services import do_create_project, do_import_trajectory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def imported(project):
    trajectory, _ = do_import_trajectory(project, make_record(steps=2, seed=1, recorded_by="bob"))
    return trajectory


@pytest.fixture
def look(client, project, alice):
    """The list page's HTML and the API list's rows, as alice sees them."""
    token = Token.objects.create(user=alice)
    client.force_login(alice)

    def look() -> tuple[str, list[dict]]:
        page = client.get(reverse("trajectory-list", args=[project.pk]))
        api = client.get(
            reverse("api-project-trajectories", args=[project.pk]),
            headers={"Authorization": f"Token {token.key}"},
        )
        assert page.status_code == api.status_code == 200
        return page.content.decode(), api.json()["results"]

    return look


def main(page: str) -> str:
    """The page without its header (which holds a CSRF token new on every answer)."""
    return page.split("<main>")[1]


def queries(look) -> int:
    with CaptureQueriesContext(connection) as captured:
        look()
    return len(captured)


def test_a_second_look_is_served_from_the_cache(look, imported):
    look()
    # page: the session, its user, project, recent jobs; API: token with its user, project
    assert queries(look) == 4 + 2


def test_without_the_cache_every_look_reads_the_rows(look, imported, settings):
    settings.WAYPOINT_LIST_CACHE_S = 0
    look()
    # page: the session, its user, project, recorders, statuses, rows, jobs; API: + count and
    # rows
    assert queries(look) == 7 + 4


def test_a_submitted_trajectory_is_listed_in_review(look, imported, bob):
    page, rows = look()
    assert "Annotating</span>" in page and rows[0]["status"] == "annotating"
    do_submit(imported, bob, imported.version)
    page, rows = look()
    assert "In review</span>" in page and "Annotating</span>" not in page
    assert rows[0]["status"] == "in_review"


def test_a_label_edit_shows_its_new_version_on_the_api_list(look, imported, bob, client):
    page, rows = look()
    version = rows[0]["version"]
    subgoal = imported.subgoals.first()
    do_update_subgoal(imported, bob, version, subgoal.pk, {"text": "Pay for the order"})
    again, rows_again = look()
    assert main(again) == main(page)  # the page shows no versions
    assert rows_again == [dict(rows[0], version=version + 1, updated_at=ANY)]
    assert rows_again[0]["updated_at"] > rows[0]["updated_at"]


def test_after_label_edits_the_api_answers_what_it_would_compute(
    project, imported, alice, bob, client, settings
):
    second, _ = do_import_trajectory(project, make_record(steps=2, seed=2, recorded_by="bob"))
    token = Token.objects.create(user=alice)
    url = reverse("api-project-trajectories", args=[project.pk])

    def answer() -> bytes:
        response = client.get(url, headers={"Authorization": f"Token {token.key}"})
        assert response.status_code == 200
        return response.content

    answer()  # kept
    for trajectory in (imported, second, imported):
        trajectory.refresh_from_db()
        subgoal = trajectory.subgoals.first()
        do_update_subgoal(trajectory, bob, trajectory.version, subgoal.pk, {"text": "Pay"})
        kept = answer()
        settings.WAYPOINT_LIST_CACHE_S = 0
        assert kept == answer()  # byte for byte
        settings.WAYPOINT_LIST_CACHE_S = 300


def test_an_import_and_a_delete_show(look, project, imported):
    assert "1 trajectory</p>" in look()[0]
    second, _ = do_import_trajectory(project, make_record(steps=2, seed=2))
    page, rows = look()
    assert "2 trajectories</p>" in page and {r["id"] for r in rows} == {imported.pk, second.pk}
    imported.delete()
    page, rows = look()
    assert "1 trajectory</p>" in page and [r["id"] for r in rows] == [second.pk]


def test_a_task_goal_changed_shows(look, imported):
    look()
    Task.objects.filter(pk=imported.task_id).update(goal="Buy the blue kettle")
    page, rows = look()
    assert "Buy the blue kettle" in page and rows[0]["task"]["goal"] == "Buy the blue kettle"
    task = Task.objects.get(pk=imported.task_id)
    task.goal = "Buy the red kettle"
    task.save()
    assert "Buy the red kettle" in look()[0]


def test_an_update_of_many_rows_shows(look, project, imported):
    look()
    Trajectory.objects.filter(project=project, outcome="success").update(outcome="failure")
    Trajectory.objects.filter(project=project).update(outcome="failure")
    page, rows = look()
    assert rows[0]["outcome"] == "failure" and "outcome-failure" in page


def test_a_recorder_renamed_or_deleted_shows(look, imported, bob):
    assert ">bob</td>" in look()[0]
    bob.username = "robert"
    bob.save()
    page, rows = look()
    assert ">robert</td>" in page and rows[0]["recorded_by"] == "robert"
    get_user_model().objects.filter(pk=bob.pk).delete()
    page, rows = look()
    assert ">robert</td>" not in page and rows[0]["recorded_by"] is None


def test_a_login_is_not_a_change(look, imported, bob, client):
    look()
    version = Project.objects.get().list_version
    client.login(username="bob", password="bob-password")
    assert Project.objects.get().list_version == version


def test_saving_a_project_loaded_earlier_never_lowers_its_version(look, project, imported):
    look()
    stale = Project.objects.get(pk=project.pk)
    Trajectory.objects.filter(pk=imported.pk).update(status="approved")
    raised = Project.objects.get(pk=project.pk).list_version
    assert raised > stale.list_version
    stale.name = "Shops and cafés"
    stale.save()
    assert Project.objects.get(pk=project.pk).list_version == raised
    page = look()[0]
    assert "<h1>Shops and cafés</h1>" in page and "Approved</span>" in page


def test_the_version_rises_once_after_the_commit_and_not_after_a_rollback(project, alice):
    other = do_create_project("Cafés", alice)
    before = Project.objects.get(pk=project.pk).list_version
    with transaction.atomic():
        for seed in range(3):
            do_import_trajectory(project, make_record(steps=1, seed=seed))
        # Not inside the transaction: an import must not lock the project against edits.
        assert Project.objects.get(pk=project.pk).list_version == before
    assert Project.objects.get(pk=project.pk).list_version == before + 1
    assert Project.objects.get(pk=other.pk).list_version == 0
    with pytest.raises(RuntimeError), transaction.atomic():
        do_import_trajectory(project, make_record(steps=1, seed=9))
        raise RuntimeError("the import failed")
    assert Project.objects.get(pk=project.pk).list_version == before + 1


def test_outsiders_get_nothing_from_a_warm_cache(look, project, imported, charlie, client):
    look()
    client.force_login(charlie)
    assert client.get(reverse("trajectory-list", args=[project.pk])).status_code == 404
    token = Token.objects.create(user=charlie)
    api = client.get(
        reverse("api-project-trajectories", args=[project.pk]),
        headers={"Authorization": f"Token {token.key}"},
    )
    assert api.status_code == 404


def test_members_share_the_page_but_not_the_header(look, project, imported, bob, client):
    alices = look()[0]
    client.force_login(bob)
    bobs = client.get(reverse("trajectory-list", args=[project.pk])).content.decode()
    assert '<span class="who">bob</span>' in bobs and '<span class="who">alice</span>' in alices
    assert main(alices) == main(bobs)


def test_the_api_answers_the_same_json_from_the_cache_in_each_layout(
    project, imported, alice, client, settings
):
    token = Token.objects.create(user=alice)
    url = reverse("api-project-trajectories", args=[project.pk])

    def answer(accept: str):
        response = client.get(
            url, headers={"Authorization": f"Token {token.key}", "Accept": accept}
        )
        assert response.status_code == 200
        return response["Content-Type"], response.content

    layouts = ("application/json", "application/json; indent=2")
    settings.WAYPOINT_LIST_CACHE_S = 0
    computed = {accept: answer(accept) for accept in layouts}
    settings.WAYPOINT_LIST_CACHE_S = 300
    for _ in range(2):  # the first answer fills the cache, the second comes from it
        assert {accept: answer(accept) for accept in layouts} == computed
    assert computed["application/json"][0] == "application/json"
    assert b'\n  "count": 1' in computed["application/json; indent=2"][1]
    assert b"\n" not in computed["application/json"][1]

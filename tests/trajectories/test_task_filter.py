"""The trajectory list's task filter: a search field with suggestions, whatever the task count."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.trajectories.builders import make_record
from trajectories.models import Task
from trajectories.services import do_create_project, do_import_trajectory

pytestmark = pytest.mark.django_db


def add_tasks(project, count: int, start: int = 0) -> None:
    Task.objects.bulk_create(
        Task(project=project, uid=f"bulk-{i}", goal=f"Open the settings and change option {i}")
        for i in range(start, start + count)
    )


def list_page(client, project, **params):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("trajectory-list", args=[project.pk]), params)
    assert response.status_code == 200
    return response, len(queries)


def test_the_list_page_does_not_grow_with_the_number_of_tasks(client, project, alice):
    do_import_trajectory(project, make_record(steps=1, seed=1))
    add_tasks(project, 10)
    client.force_login(alice)
    few, few_queries = list_page(client, project)
    add_tasks(project, 790, start=10)
    many, many_queries = list_page(client, project)
    assert many_queries == few_queries
    # The same page but for the count of tasks nowhere on it: equal size, give or take digits.
    assert abs(len(many.content) - len(few.content)) < 64
    assert b"change option 799" not in many.content


def test_it_suggests_at_most_20_tasks_matching_the_typed_text(client, project, alice, bob):
    add_tasks(project, 30)
    url = reverse("task-suggestions", args=[project.pk])
    for user in (alice, bob):
        client.force_login(user)
        found = client.get(url, {"q": "OPTION 1"}).json()
        # option 1, 10..19
        assert sorted(t["uid"] for t in found["tasks"]) == sorted(
            ["bulk-1", *(f"bulk-{i}" for i in range(10, 20))]
        )
        assert found["more"] is False
        assert set(found["tasks"][0]) == {"id", "uid", "goal"}
        everything = client.get(url).json()
        assert len(everything["tasks"]) == 20
        assert everything["more"] is True


def test_it_finds_a_task_by_its_uid(client, project, alice):
    add_tasks(project, 3)
    client.force_login(alice)
    found = client.get(reverse("task-suggestions", args=[project.pk]), {"q": "bulk-2"}).json()
    assert [t["goal"] for t in found["tasks"]] == ["Open the settings and change option 2"]


def test_it_hides_the_suggestions_from_charlie(client, project, charlie):
    add_tasks(project, 3)
    client.force_login(charlie)
    response = client.get(reverse("task-suggestions", args=[project.pk]), {"q": "option"})
    assert response.status_code == 404


def test_it_suggests_only_the_projects_own_tasks(client, project, alice):
    other = do_create_project("Other", alice)
    add_tasks(other, 3)
    client.force_login(alice)
    found = client.get(reverse("task-suggestions", args=[project.pk]), {"q": "option"}).json()
    assert found == {"tasks": [], "more": False}


def test_it_needs_a_login_for_suggestions(client, project):
    response = client.get(reverse("task-suggestions", args=[project.pk]))
    assert response.status_code == 302


def test_it_filters_by_a_picked_task_and_shows_its_goal(client, project, alice):
    first, _ = do_import_trajectory(project, make_record(steps=1, seed=1))
    do_import_trajectory(project, make_record(steps=1, seed=2))
    Task.objects.filter(pk=first.task_id).update(goal="Find the cheapest tent")
    client.force_login(alice)
    response, _ = list_page(client, project, task=first.task_id)
    assert response.context["listed"] == [first.pk]
    # The search field shows the picked task's goal, the hidden input keeps its id.
    assert b'value="Find the cheapest tent"' in response.content
    assert f'name="task" value="{first.task_id}"'.encode() in response.content


def test_it_filters_by_typed_goal_text(client, project, alice):
    first, _ = do_import_trajectory(project, make_record(steps=1, seed=1))
    second, _ = do_import_trajectory(project, make_record(steps=1, seed=2))
    Task.objects.filter(pk=first.task_id).update(goal="Find the cheapest tent")
    Task.objects.filter(pk=second.task_id).update(goal="Find the dearest tent")
    client.force_login(alice)
    response, _ = list_page(client, project, task_goal="cheapest")
    assert response.context["listed"] == [first.pk]
    response, _ = list_page(client, project, task_goal="TENT")
    assert set(response.context["listed"]) == {first.pk, second.pk}


def test_a_task_of_another_project_lists_nothing(client, project, alice):
    do_import_trajectory(project, make_record(steps=1, seed=1))
    other = do_create_project("Other", alice)
    theirs, _ = do_import_trajectory(other, make_record(steps=1, seed=2))
    client.force_login(alice)
    response, _ = list_page(client, project, task=theirs.task_id)
    assert response.context["listed"] == []
    assert b"Some filters are invalid" not in response.content


def test_a_task_id_that_is_not_a_number_is_an_invalid_filter(client, project, alice):
    do_import_trajectory(project, make_record(steps=1, seed=1))
    client.force_login(alice)
    response, _ = list_page(client, project, task="tent")
    assert response.context["listed"] == []
    assert b"Some filters are invalid: Task" in response.content


def test_the_list_shows_a_long_goal_whole_for_the_browser_to_clip(client, project, alice):
    trajectory, _ = do_import_trajectory(project, make_record(steps=1, seed=1))
    goal = "Compare the prices of " + ", ".join(f"item {i}" for i in range(40))
    Task.objects.filter(pk=trajectory.task_id).update(goal=goal)
    client.force_login(alice)
    response, _ = list_page(client, project)
    link = f'<a href="/trajectories/{trajectory.pk}/" title="{goal}">{goal}</a>'
    assert f'<td class="goal">{link}' in (response.content.decode())


def test_a_long_goal_picked_by_id_is_a_valid_filter(client, project, alice):
    trajectory, _ = do_import_trajectory(project, make_record(steps=1, seed=1))
    do_import_trajectory(project, make_record(steps=1, seed=2))
    goal = "Compare the prices of " + ", ".join(f"item {i}" for i in range(60))
    Task.objects.filter(pk=trajectory.task_id).update(goal=goal)
    client.force_login(alice)
    for params in ({"task": trajectory.task_id}, {"task": trajectory.task_id, "task_goal": goal}):
        response, _ = list_page(client, project, **params)
        assert response.context["listed"] == [trajectory.pk]
        assert b"Some filters are invalid" not in response.content


def test_the_list_page_title_is_the_project_name_and_loads_the_search_script_once(
    client, project, alice
):
    client.force_login(alice)
    html = client.get(reverse("trajectory-list", args=[project.pk])).content.decode()
    title = html[html.index("<title>") + len("<title>") : html.index("</title>")]
    assert title == "Shops · Waypoint"  # was "Shops<script src=…></script> · Waypoint"
    assert html.count("trajectories/task_search.js") == 1

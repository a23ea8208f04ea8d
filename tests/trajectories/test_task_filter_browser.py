"""In Chromium: the list's task filter suggests tasks as one types and filters by the one picked."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tests.annotate.test_workspace_browser import eventually, page_as
from tests.conftest import shot
from tests.trajectories.builders import make_record
from trajectories.models import Task
from trajectories.services import do_create_project, do_import_trajectory


@pytest.mark.django_db(transaction=True)
def test_typing_part_of_a_goal_suggests_tasks_and_picking_one_filters(browser, live_server):
    alice = get_user_model().objects.create_user("alice", password="alice-password")
    project = do_create_project("Shops", alice)
    goals = ["Find the cheapest tent", "Find the lightest tent", "Order a desk lamp"]
    trajectories = []
    for seed, goal in enumerate(goals):
        trajectory, _ = do_import_trajectory(project, make_record(steps=2, seed=seed))
        Task.objects.filter(pk=trajectory.task_id).update(goal=goal)
        trajectories.append(trajectory)
    Task.objects.bulk_create(
        Task(project=project, uid=f"bulk-{i}", goal=f"Open the settings and change option {i}")
        for i in range(300)
    )
    cheapest = trajectories[0]

    page = page_as(browser, live_server, alice)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/projects/{project.pk}/trajectories/")
    assert page.locator("#trajectory-table tbody tr").count() == 3
    assert page.locator("#task-suggestions option").count() == 0  # nothing until asked

    page.locator("#id_task_goal").press_sequentially("tent", delay=30)
    eventually(lambda: page.locator("#task-suggestions option").count() == 2)
    suggested = page.locator("#task-suggestions option").evaluate_all(
        "options => options.map(o => o.value)"
    )
    assert sorted(suggested) == ["Find the cheapest tent", "Find the lightest tent"]
    # Typed text alone filters by goal text.
    eventually(lambda: page.locator("#trajectory-table tbody tr").count() == 2)

    # Picking a suggestion (the field takes its whole goal) names exactly that task.
    page.fill("#id_task_goal", "Find the cheapest tent")
    assert page.input_value("#id_task") == str(cheapest.task_id)
    eventually(lambda: page.locator("#trajectory-table tbody tr").count() == 1)
    assert f"task={cheapest.task_id}" in page.url
    assert page.locator("#trajectory-table").inner_text().count("Find the cheapest tent") == 1
    shot(page, "load-task-filter")

    # Editing the text drops the picked task: the filter is the text again.
    page.fill("#id_task_goal", "desk")
    assert page.input_value("#id_task") == ""
    eventually(lambda: "Order a desk lamp" in page.locator("#trajectory-table").inner_text())
    assert page.locator("#trajectory-table tbody tr").count() == 1

    # A link to the picked task's list shows its goal in the field.
    page.goto(f"{live_server.url}/projects/{project.pk}/trajectories/?task={cheapest.task_id}")
    assert page.input_value("#id_task_goal") == "Find the cheapest tent"
    assert page.locator("#trajectory-table tbody tr").count() == 1
    assert page.errors == []

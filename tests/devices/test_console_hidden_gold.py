"""The recording console in a project that hides its gold (``hide_gold``): an annotator cannot
pose the virtual device's own tasks (a benchmark's instances, whose gold the device knows) nor
reset it to a seed; written tasks are recorded as before. The project's admin may do both.

alice is the project's admin, bob an annotator; the session's virtual device is at seed 7.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.utils.html import escape
from rest_framework.test import APIClient

from devices.services import connect, do_import_virtual_tasks, do_take_device
from trajectories.models import Project, Task, Trajectory
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task

pytestmark = pytest.mark.django_db

SESSION_SEED = 7
REFUSED = (
    "this project hides gold answers: only its admins can pose the virtual device's tasks or "
    "reset it to a seed"
)


@pytest.fixture
def hidden(project):
    Project.objects.filter(pk=project.pk).update(hide_gold=True)
    project.refresh_from_db()
    return project


@pytest.fixture
def bench(hidden, device, adb_servers, project_device):
    """The device's tasks in the project (as its admin added them), and their gold answers."""
    tasks = do_import_virtual_tasks(hidden, connect(device.serial))
    golds = {item["gold"] for item in json.loads(device.shell(["waypoint", "tasks"]))}
    return tasks, golds


@pytest.fixture
def bobs_lease(adb_servers, device, project_device, bob):
    lease = do_take_device(device.serial, adb_servers[0], bob)
    yield lease
    device.shell(["waypoint", "reset", "--seed", str(SESSION_SEED)])


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_annotator_cannot_pose_a_virtual_task_or_reset_the_seed(bench, bobs_lease, device, bob):
    tasks, _ = bench
    virtual = tasks[0]
    written = get_or_create_task(virtual.project, TaskRecord(uid="w", goal="Look around"))
    api = APIClient()
    api.force_authenticate(bob)
    url = f"/api/v1/devices/{device.serial}/trajectories"
    for body in ({"task": virtual.pk}, {"task": written.pk, "reset_seed": 3}):
        response = api.post(url, body, format="json")
        assert (response.status_code, response.json()) == (403, {"detail": REFUSED}), body
    page = client_of(bob)
    response = page.post(
        f"/devices/{device.serial}/start/", {"task": virtual.pk, "reset": "1", "seed": "3"}
    )
    assert escape(REFUSED) in page.get(response.url).content.decode()
    response = page.post(f"/devices/{device.serial}/tasks/", {"project": virtual.project_id})
    assert escape(REFUSED) in page.get(response.url).content.decode()
    assert not Trajectory.objects.exists()
    assert json.loads(device.shell(["waypoint", "env"]))["seed"] == SESSION_SEED  # no reset

    # A written task, on the device as it is, is recorded as before.
    response = api.post(url, {"task": written.pk}, format="json")
    assert response.status_code == 201
    assert Trajectory.objects.get().task == written


def test_the_console_offers_an_annotator_no_virtual_task_and_no_gold(
    bench, bobs_lease, device, bob
):
    tasks, golds = bench
    page = client_of(bob).get(f"/devices/{device.serial}/").content.decode()
    assert 'name="goal"' in page  # the form to record a written task is there
    for task in tasks:
        assert f'<option value="{task.pk}" title=' not in page
    assert 'name="reset"' not in page
    assert "only their admins reset the virtual device to a seed" in page
    assert "Add the virtual device&#x27;s tasks" not in page
    assert any(len(gold) >= 4 for gold in golds)
    for gold in golds:
        if len(gold) >= 4:  # a code, a price, an order number ("2" is on any page)
            assert gold not in page


def test_the_admin_poses_them(bench, adb_servers, device, alice):
    tasks, _ = bench
    lease = do_take_device(device.serial, adb_servers[0], alice)
    try:
        page = client_of(alice).get(f"/devices/{device.serial}/").content.decode()
        assert f'<option value="{tasks[0].pk}" title=' in page
        assert 'name="reset" id="reset" value="1" checked' in page
        api = APIClient()
        api.force_authenticate(alice)
        response = api.post(
            f"/api/v1/devices/{device.serial}/trajectories",
            {"task": tasks[0].pk, "reset_seed": 3},
            format="json",
        )
        assert response.status_code == 201
    finally:
        device.shell(["waypoint", "reset", "--seed", str(SESSION_SEED)])
        lease.delete()


def test_without_hide_gold_an_annotator_poses_them_as_before(
    project, device, adb_servers, project_device, bobs_lease, bob
):
    tasks = do_import_virtual_tasks(project, connect(device.serial), bob)
    assert Task.objects.filter(uid__startswith="virtual:").count() == len(tasks) > 0
    api = APIClient()
    api.force_authenticate(bob)
    response = api.post(
        f"/api/v1/devices/{device.serial}/trajectories",
        {"task": tasks[0].pk, "reset_seed": 3},
        format="json",
    )
    assert response.status_code == 201

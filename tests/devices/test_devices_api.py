"""The device endpoints of the REST API: a script records a trajectory like the console does."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from tests.devices.conftest import grant, settled_screen
from trajectories.models import Status, Trajectory
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task

pytestmark = pytest.mark.django_db


def client_for(user) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


@pytest.fixture
def task(project):
    return get_or_create_task(project, TaskRecord(uid="kettle", goal="Find the kettle"))


def test_it_lists_devices_with_facts_and_lease(adb_servers, device, project_device, alice, bob):
    client_for(alice).post(f"/api/v1/devices/{device.serial}/lease", {}, format="json")
    response = client_for(bob).get("/api/v1/devices/")
    assert response.status_code == 200
    (server,) = response.json()
    assert server["server"] == adb_servers[0] and server["error"] == ""
    info = next(d for d in server["devices"] if d["serial"] == device.serial)
    assert info["model"] == "Waypoint Virtual" and info["width"] == 540 and info["virtual"]
    assert info["lease"]["holder"] == "alice"


def test_it_needs_a_login(adb_servers):
    assert APIClient().get("/api/v1/devices/").status_code in (401, 403)


def test_a_script_records_a_trajectory(adb_servers, device, project_device, alice, task):
    api = client_for(alice)
    base = f"/api/v1/devices/{device.serial}"
    assert api.post(f"{base}/lease", {"seconds": 120}, format="json").status_code == 200
    response = api.post(f"{base}/trajectories", {"task": task.pk}, format="json")
    assert response.status_code == 201, response.json()
    trajectory_id = response.json()["id"]

    response = api.post(
        f"{base}/actions", {"type": "open_app", "package": "com.waypoint.freshcart"}, format="json"
    )
    assert response.status_code == 201, response.json()
    step = response.json()
    assert step["index"] == 0 and step["action"]["type"] == "open_app"
    assert set(step["timings"]) == {"action_ms", "settle_ms", "capture_ms", "store_ms"}
    assert step["screen"]["package"] == "com.android.launcher3"

    response = api.post(f"{base}/actions", {"type": "click", "x": 9999, "y": 1}, format="json")
    assert response.status_code == 422  # well-formed, but off this device's screen
    assert response.json() == {
        "detail": "action: point (9999, 1) lies outside the 540x1200 screenshot"
    }
    response = api.post(f"{base}/actions", {"type": "fly"}, format="json")
    assert response.status_code == 422 and "unknown action type 'fly'" in response.json()["detail"]

    response = api.post(f"{base}/finish", {"status": "failure"}, format="json")
    assert response.status_code == 200 and response.json()["outcome"] == "failure"
    trajectory = Trajectory.objects.get(pk=trajectory_id)
    assert trajectory.status == Status.ANNOTATING and trajectory.step_count == 2
    response = api.post(f"{base}/actions", {"type": "back"}, format="json")
    assert response.status_code == 409
    assert response.json()["detail"].startswith("Nothing is being recorded on device")
    assert api.delete(f"{base}/lease").status_code == 204


def test_another_user_cannot_act_or_release(adb_servers, device, project_device, alice, bob, task):
    base = f"/api/v1/devices/{device.serial}"
    client_for(alice).post(f"{base}/lease", {}, format="json")
    client_for(alice).post(f"{base}/trajectories", {"task": task.pk}, format="json")
    response = client_for(bob).post(f"{base}/lease", {}, format="json")
    assert response.status_code == 409 and "in use by alice" in response.json()["detail"]
    response = client_for(bob).post(f"{base}/actions", {"type": "back"}, format="json")
    assert response.status_code == 409
    assert (
        response.json()["detail"]
        == f"Take device {device.serial} before acting on it. alice drives it."
    )
    assert client_for(bob).delete(f"{base}/lease").status_code == 409
    admin = get_user_model().objects.create_user("root", is_staff=True)
    assert client_for(admin).delete(f"{base}/lease?force=1").status_code == 204


def test_an_outsider_cannot_record_a_projects_task(
    adb_servers, device, project_device, charlie, task
):
    base = f"/api/v1/devices/{device.serial}"
    response = client_for(charlie).post(f"{base}/lease", {}, format="json")
    assert response.status_code == 404 and response.json() == {"detail": "No such device"}
    response = client_for(charlie).post(f"{base}/trajectories", {"task": task.pk}, format="json")
    assert response.status_code == 404


def test_a_written_task_needs_project_and_goal(adb_servers, device, project_device, bob, project):
    api = client_for(bob)
    base = f"/api/v1/devices/{device.serial}"
    api.post(f"{base}/lease", {}, format="json")
    response = api.post(f"{base}/trajectories", {"goal": "x"}, format="json")
    assert response.status_code == 400
    assert response.json() == {"detail": "task: give a task id, or a project and a goal"}
    response = api.post(
        f"{base}/trajectories", {"project": project.pk, "goal": "Open notes"}, format="json"
    )
    assert response.status_code == 201 and response.json()["status"] == "recording"


def test_an_unknown_device_is_not_found(adb_servers, alice, project):
    grant("nowhere:1", project)
    response = client_for(alice).post("/api/v1/devices/nowhere:1/lease", {}, format="json")
    assert response.status_code == 404
    assert response.json() == {"detail": "Device nowhere:1 is not connected to any adb server."}


def test_the_frame_is_sent_only_when_it_changed(adb_servers, device, project_device, alice):
    api = client_for(alice)
    settled_screen(device)
    first = api.get(f"/api/v1/devices/{device.serial}/frame")
    assert first.status_code == 200 and first["Content-Type"] == "image/png"
    again = api.get(f"/api/v1/devices/{device.serial}/frame", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    device.app_start("com.waypoint.notes")
    changed = api.get(f"/api/v1/devices/{device.serial}/frame", HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200 and changed["ETag"] != first["ETag"]

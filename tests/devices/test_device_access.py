"""Devices belong to projects: members list, watch and drive them; leases have a maximum length.

alice is the admin of the project that has the virtual device, bob a member (annotator),
charlie belongs to no project, root is a site admin.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from devices.models import Device, Lease
from tests.devices.conftest import grant
from trajectories.events import DEVICE_RELEASED, DEVICE_UPDATED
from trajectories.models import AuditEvent

pytestmark = pytest.mark.django_db


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def serials_listed(user) -> list[str]:
    response = api(user).get("/api/v1/devices/")
    assert response.status_code == 200
    return [d["serial"] for server in response.json() for d in server["devices"]]


@pytest.fixture
def root(db):
    return get_user_model().objects.create_user("root", is_staff=True)


def test_a_user_in_no_project_cannot_list_watch_or_lease(
    adb_servers, device, project_device, charlie
):
    base = f"/api/v1/devices/{device.serial}"
    assert device.serial not in serials_listed(charlie)
    for response in (
        api(charlie).get(f"{base}/frame"),
        api(charlie).post(f"{base}/lease", {}, format="json"),
        api(charlie).get(base),
    ):
        assert response.status_code == 404
        assert response.json() == {"detail": "No such device"}
    page = browser(charlie)
    assert device.serial not in page.get("/devices/").content.decode()
    assert "Devices appear here once a site admin grants them" in (
        page.get("/devices/").content.decode()
    )
    for url in ("", "frame/", "elements/"):
        assert page.get(f"/devices/{device.serial}/{url}").status_code == 404
    assert page.post(f"/devices/{device.serial}/take/").status_code == 404
    assert not Lease.objects.exists()


def test_a_member_lists_watches_and_leases(adb_servers, device, project_device, project, bob):
    listed = api(bob).get("/api/v1/devices/").json()[0]["devices"]
    (info,) = [d for d in listed if d["serial"] == device.serial]
    assert info["projects"] == [project.pk] and info["lease_max_seconds"] == 3600
    assert api(bob).get(f"/api/v1/devices/{device.serial}/frame").status_code == 200
    response = api(bob).post(f"/api/v1/devices/{device.serial}/lease", {}, format="json")
    assert response.status_code == 200 and response.json()["holder"] == "bob"
    page = browser(bob)
    html = page.get("/devices/").content.decode()
    assert device.serial in html and "Shops" in html and "leases last at most 1 h" in html
    console = page.get(f"/devices/{device.serial}/").content.decode()
    ends = timezone.localtime(Lease.objects.get().acquired_at + timedelta(hours=1))
    assert f"driven by <b>bob</b>, at most until {ends:%H:%M}" in console
    assert page.get(f"/devices/{device.serial}/frame/").status_code == 200


def test_a_device_in_no_project_is_seen_by_site_admins_only(adb_servers, device, alice, root):
    assert device.serial not in serials_listed(alice)
    assert device.serial in serials_listed(root)
    html = browser(root).get("/devices/").content.decode()
    assert "no project: only site admins see it" in html


def test_a_site_admin_grants_a_device_to_a_project(adb_servers, device, project, alice, bob, root):
    url = f"/api/v1/devices/{device.serial}"
    assert api(alice).patch(url, {"projects": [project.pk]}, format="json").status_code == 404
    response = api(root).patch(
        url,
        {"projects": [project.pk], "label": "Shelf phone", "max_lease_seconds": 900},
        format="json",  # API bodies are JSON
    )
    assert response.status_code == 200, response.json()
    assert response.json() == {
        "serial": device.serial,
        "label": "Shelf phone",
        "projects": [project.pk],
        "max_lease_seconds": 900,
        "lease_max_seconds": 900,
    }
    assert device.serial in serials_listed(bob)
    # The project's admin sees the device but does not decide which projects have it.
    response = api(alice).patch(url, {"projects": []}, format="json")
    assert response.status_code == 403
    assert response.json() == {
        "detail": "Only a site admin can change which projects have a device"
    }
    event = AuditEvent.objects.get(kind=DEVICE_UPDATED)
    assert event.actor == root and event.before is None
    assert event.after == {
        "label": "Shelf phone",
        "projects": [project.pk],
        "max_lease_seconds": 900,
    }
    response = api(root).patch(url, {"projects": [project.pk, 999999]}, format="json")
    assert response.status_code == 400
    assert response.json() == {"detail": "projects: there is no project 999999"}
    response = api(root).patch(url, {"max_lease_seconds": 5}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "detail": "max_lease_seconds: Ensure this value is greater than or equal to 60."
    }


def test_a_site_admin_grants_a_device_on_the_devices_page(adb_servers, device, project, bob, root):
    page = browser(root)
    response = page.post(
        f"/devices/{device.serial}/settings/",
        {"projects": [project.pk], "label": "Shelf phone", "max_lease_minutes": "20"},
        follow=True,
    )
    assert f"Device {device.serial} saved." in response.content.decode()
    registered = Device.objects.get(serial=device.serial)
    assert list(registered.projects.all()) == [project]
    assert registered.max_lease_seconds == 1200 and registered.label == "Shelf phone"
    html = browser(bob).get("/devices/").content.decode()
    assert "Shelf phone" in html and "leases last at most 20 min" in html
    response = page.post(
        f"/devices/{device.serial}/settings/", {"max_lease_minutes": "soon"}, follow=True
    )
    assert "Longest lease: give minutes, not &#x27;soon&#x27;." in response.content.decode()
    # A project admin is not a site admin: the form is refused.
    assert browser(bob).post(f"/devices/{device.serial}/settings/", {}).status_code == 403


def test_a_project_admin_ends_a_members_lease(adb_servers, device, project_device, alice, bob):
    base = f"/api/v1/devices/{device.serial}"
    api(bob).post(f"{base}/lease", {}, format="json")
    html = browser(alice).get("/devices/").content.decode()
    assert "End lease" in html
    response = api(alice).delete(f"{base}/lease?force=1")
    assert response.status_code == 204
    assert not Lease.objects.exists()
    event = AuditEvent.objects.get(kind=DEVICE_RELEASED)
    assert event.actor == alice and event.after["holder"] == "bob" and event.after["forced"]
    # The page's button does the same.
    api(bob).post(f"{base}/lease", {}, format="json")
    browser(alice).post(f"/devices/{device.serial}/release/", {"force": "1"})
    assert not Lease.objects.exists()


def test_a_member_cannot_end_someone_elses_lease(adb_servers, device, project_device, alice, bob):
    base = f"/api/v1/devices/{device.serial}"
    api(alice).post(f"{base}/lease", {}, format="json")
    assert "End lease" not in browser(bob).get("/devices/").content.decode()
    response = api(bob).delete(f"{base}/lease?force=1")
    assert response.status_code == 409
    assert response.json() == {
        "detail": f"Device {device.serial} is held by alice; "
        "only an admin of its project or a site admin can end the lease."
    }


def test_renewal_past_the_maximum_is_refused(adb_servers, device, project, bob, settings):
    settings.WAYPOINT_LEASE_MAX_SECONDS = 120
    grant(device.serial, project)
    base = f"/api/v1/devices/{device.serial}"
    taken = api(bob).post(f"{base}/lease", {"seconds": 600}, format="json").json()
    # A lease never starts longer than the maximum...
    lease = Lease.objects.get()
    assert lease.expires_at == lease.acquired_at + timedelta(seconds=120)
    assert taken["ends_at_latest"] == taken["expires_at"]
    # ...and once it ends at the maximum, renewing it further is refused, saying why.
    response = api(bob).post(f"{base}/lease", {"seconds": 600}, format="json")
    assert response.status_code == 409
    ends = timezone.localtime(lease.expires_at)
    assert response.json() == {
        "detail": f"Your lease on device {device.serial} has reached its maximum length of "
        f"2 min, set by an admin: it ends at {ends:%H:%M:%S} and cannot be renewed. "
        "Release the device, or take it again once the lease has ended."
    }
    assert Lease.objects.get().expires_at == lease.expires_at
    # The devices page's Open still leads its holder to the console.
    response = browser(bob).post(f"/devices/{device.serial}/take/")
    assert response.status_code == 302 and response["Location"] == f"/devices/{device.serial}/"
    # The console's heartbeat renews by a minute: 100 s into a 2-minute lease it keeps the
    # lease to its end and tells the driver when that is.
    started = timezone.now() - timedelta(seconds=100)
    end = started + timedelta(seconds=120)
    Lease.objects.update(acquired_at=started, expires_at=started + timedelta(seconds=110))
    response = browser(bob).post(f"/devices/{device.serial}/heartbeat/")
    assert response.status_code == 200
    assert response.json()["notice"] == (
        f"Your lease on device {device.serial} reaches its maximum length of 2 min, set by an "
        f"admin, at {timezone.localtime(end):%H:%M:%S}: finish or release before then."
    )
    assert Lease.objects.get().expires_at == end
    # Once it has ended, the heartbeat says so and the device is free.
    Lease.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = browser(bob).post(f"/devices/{device.serial}/heartbeat/")
    assert response.status_code == 409
    assert response.json() == {"detail": f"You do not hold device {device.serial} (any more)."}


def test_a_renewal_stops_at_the_devices_own_maximum(adb_servers, device, project, bob):
    grant(device.serial, project)
    Device.objects.filter(serial=device.serial).update(max_lease_seconds=300)
    base = f"/api/v1/devices/{device.serial}"
    api(bob).post(f"{base}/lease", {"seconds": 60}, format="json")
    now = timezone.now()
    Lease.objects.update(
        acquired_at=now - timedelta(seconds=270), expires_at=now + timedelta(seconds=10)
    )
    response = api(bob).post(f"{base}/lease", {"seconds": 600}, format="json")
    assert response.status_code == 200
    lease = Lease.objects.get()
    assert lease.expires_at == lease.acquired_at + timedelta(seconds=300)


def test_the_demo_puts_the_virtual_device_in_the_demo_project(settings):
    from django.core.management import call_command

    settings.WAYPOINT_VIRTUAL_DEVICE = True
    call_command("seed_demo", "--trajectories", "1", stdout=__import__("io").StringIO())
    device = Device.objects.get(serial=f"127.0.0.1:{settings.WAYPOINT_VIRTUAL_DEVICE_PORT}")
    assert [p.name for p in device.projects.all()] == ["Demo project"]


API_ENDPOINTS = [
    ("get", ""),
    ("patch", ""),
    ("post", "/lease"),
    ("delete", "/lease"),
    ("post", "/trajectories"),
    ("post", "/actions"),
    ("post", "/finish"),
    ("get", "/frame"),
]
PAGES = [
    ("get", ""),
    ("post", "take/"),
    ("post", "release/"),
    ("post", "heartbeat/"),
    ("get", "frame/"),
    ("get", "elements/"),
    ("post", "start/"),
    ("post", "tasks/"),
    ("post", "act/"),
    ("post", "finish/"),
    ("post", "undo/"),
    ("post", "note/"),
    ("post", "memory/"),
    ("post", "memory/1/"),
    ("get", "panel/?step=0"),
    ("post", "labels/undo/"),
    ("post", "steps/0/labels/"),
    ("post", "settings/"),
]


def test_every_device_endpoint_is_a_404_for_an_outsider(
    adb_servers, device, project_device, alice, charlie
):
    api(alice).post(f"/api/v1/devices/{device.serial}/lease", {}, format="json")
    for method, suffix in API_ENDPOINTS:
        response = getattr(api(charlie), method)(f"/api/v1/devices/{device.serial}{suffix}")
        assert response.status_code == 404, (method, suffix, response.status_code)
    page = browser(charlie)
    for method, suffix in PAGES:
        response = getattr(page, method)(f"/devices/{device.serial}/{suffix}")
        assert response.status_code == 404, (method, suffix, response.status_code)
    assert Lease.objects.get().holder == alice

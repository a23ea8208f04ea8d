"""Starting an exploration from the command, the API and the page: what is refused, and the
message that says why (an unknown app, a bad budget or strategy, a busy device, an outsider)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from devices.services import do_take_device
from explore.models import Exploration
from explore.services import check_budget

MAIL = "com.waypoint.mailbox"


@pytest.mark.parametrize(
    ("budget", "parsed"),
    [("200", (200, None)), ("200steps", (200, None)), ("30min", (None, 1800)), (5, (5, None))],
)
def test_a_budget_is_steps_or_minutes(budget, parsed):
    assert check_budget(budget) == parsed


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ("soon", "budget: give a number of steps (200 or 200steps) or minutes (30min), got 'soon'"),
        ("0", "budget: from 1 to 100000 steps, got 0"),
        ("2000min", "budget: from 1 to 1440 minutes, got 2000"),
        (-3, "budget: give a number of steps (200 or 200steps) or minutes (30min), got '-3'"),
    ],
)
def test_the_command_refuses_a_bad_budget(pool, project, budget, message):
    with pytest.raises(CommandError) as caught:
        call_command(
            "explore", "--project", str(project.pk), "--app", MAIL,
            "--device", pool.serial, "--budget", str(budget), "--no-wait",
        )  # fmt: skip
    assert str(caught.value) == message
    assert not Exploration.objects.exists()


def test_the_command_refuses_an_app_the_device_does_not_have(pool, project):
    with pytest.raises(CommandError) as caught:
        call_command(
            "explore", "--project", str(project.pk), "--app", "com.example.nothing",
            "--device", pool.serial, "--budget", "20", "--no-wait",
        )  # fmt: skip
    assert (
        str(caught.value) == f"app: 'com.example.nothing' is not installed on device {pool.serial}"
    )


def test_the_command_refuses_an_unknown_strategy(pool, project):
    with pytest.raises(CommandError) as caught:
        call_command(
            "explore", "--project", str(project.pk), "--app", MAIL, "--device", pool.serial,
            "--budget", "20", "--strategy", "random", "--no-wait",
        )  # fmt: skip
    assert str(caught.value) == "strategy: 'random' is not a strategy (known: dfs, bfs, llm)"


def test_the_api_refuses_a_busy_device_and_queues_on_a_free_one(pool, project, alice, bob):
    do_take_device(pool.serial, "", bob)
    api = APIClient()
    api.force_authenticate(alice)
    url = f"/api/v1/projects/{project.pk}/explorations/"
    body = {"app": MAIL, "device": pool.serial, "budget": "20"}
    busy = api.post(url, body, format="json")
    assert busy.status_code == 422
    assert busy.json()["detail"].startswith(f"device: {pool.serial} is busy: bob holds it until ")
    assert not Exploration.objects.exists()


def test_the_api_refuses_a_device_of_another_project_and_outsiders(pool, project, alice, charlie):
    api = APIClient()
    api.force_authenticate(alice)
    body = {"app": MAIL, "device": "emulator-5554", "budget": "20"}
    other = api.post(f"/api/v1/projects/{project.pk}/explorations/", body, format="json")
    assert other.status_code == 422
    assert other.json()["detail"] == (
        "device: 'emulator-5554' is not a device of this project (grant it first)"
    )
    api.force_authenticate(charlie)
    body["device"] = pool.serial
    outsider = api.post(f"/api/v1/projects/{project.pk}/explorations/", body, format="json")
    assert outsider.status_code == 404


def test_the_page_says_why_it_refused(client, pool, project, alice):
    client.force_login(alice)
    page = client.post(
        f"/projects/{project.pk}/explorations/",
        {"app": MAIL, "device": pool.serial, "budget": "a while", "strategy": "dfs", "seed": 0},
    )
    assert page.status_code == 200
    assert "budget: give a number of steps (200 or 200steps) or minutes (30min), got" in (
        page.content.decode()
    )


def test_the_page_offers_the_projects_devices_only(client, pool, project, alice):
    from devices.models import Device

    Device.objects.create(serial="elsewhere-5556")  # granted to no project
    client.force_login(alice)
    page = client.get(f"/projects/{project.pk}/explorations/").content.decode()
    assert f'<option value="{pool.serial}">' in page
    assert "elsewhere-5556" not in page
    refused = client.post(
        f"/projects/{project.pk}/explorations/",
        {"app": MAIL, "device": "elsewhere-5556", "budget": "20", "strategy": "dfs", "seed": 0},
    ).content.decode()
    assert "Select a valid choice. elsewhere-5556 is not one of the available choices." in refused


def test_a_project_without_devices_says_how_to_get_one(client, project, alice):
    client.force_login(alice)
    page = client.get(f"/projects/{project.pk}/explorations/").content.decode()
    assert "The project has no device yet: an admin grants one on the Devices page" in page
    assert "<option" not in page.split('id="id_device"')[1].split("</select>")[0]


def test_an_admin_sets_an_apps_deny_list_and_a_member_reads_it(project, alice, bob):
    api = APIClient()
    api.force_authenticate(alice)
    url = f"/api/v1/projects/{project.pk}/deny-lists/{MAIL}"
    put = api.put(url, {"entries": ["Archive", "id:nav_delete", "Archive"]}, format="json")
    assert put.status_code == 200
    assert put.json()["entries"] == ["Archive", "id:nav_delete"]
    assert "send" in put.json()["default"]
    bad = api.put(url, {"entries": ["id:"]}, format="json")
    assert bad.status_code == 422
    assert bad.json()["detail"] == "deny: 'id:' names no resource id"
    shapeless = [
        (False, "Invalid data. Expected a dictionary, but got bool."),
        ({}, "entries: This field is required."),
        ({"entries": "Archive"}, "entries: must be a list, got 'Archive'"),
        ({"entries": ["Arch\x00ive"]}, "entries.0: Null characters are not allowed."),
    ]
    for body, message in shapeless:
        refused = api.put(url, body, format="json")
        assert (refused.status_code, refused.json()["detail"]) == (400, message)
    assert api.get(url).json()["entries"] == ["Archive", "id:nav_delete"]  # left as it was
    api.force_authenticate(bob)
    assert api.get(url).json()["entries"] == ["Archive", "id:nav_delete"]
    assert api.put(url, {"entries": []}, format="json").status_code == 403


# ------------------------------------------------------- allowing what the deny-list forbids

ALLOWED = ["pay", "checkout"]
ALLOW_DENIED = (
    "allow: only the project's admins may allow what its deny-lists forbid; start the "
    "exploration without allow, or ask an admin"
)


def test_only_an_admin_may_allow_what_the_deny_list_forbids(pool, project, alice, bob):
    """bob is an annotator: he explores, but within the admins' deny-lists."""
    api = APIClient()
    api.force_authenticate(bob)
    url = f"/api/v1/projects/{project.pk}/explorations/"
    body = {"app": MAIL, "device": pool.serial, "budget": "20", "allow": ALLOWED}
    refused = api.post(url, body, format="json")
    assert (refused.status_code, refused.json()) == (403, {"detail": ALLOW_DENIED})
    assert not Exploration.objects.exists()  # nothing queued
    refused = api.post(url, {**body, "allow": ["id:"]}, format="json")  # even a bad one
    assert (refused.status_code, refused.json()) == (403, {"detail": ALLOW_DENIED})
    assert not Exploration.objects.exists()

    api.force_authenticate(alice)  # the project's admin
    accepted = api.post(url, body, format="json")
    assert accepted.status_code == 202, accepted.json()
    assert Exploration.objects.get(pk=accepted.json()["id"]).allow == ALLOWED


def test_a_member_explores_without_allow_and_a_site_admin_may_allow(pool, project, bob, charlie):
    from trajectories.models import Membership, Role

    api = APIClient()
    url = f"/api/v1/projects/{project.pk}/explorations/"
    body = {"app": MAIL, "device": pool.serial, "budget": "20"}
    api.force_authenticate(bob)
    for empty in ({}, {"allow": []}):
        started = api.post(url, {**body, **empty}, format="json")
        assert started.status_code == 202, started.json()
        Exploration.objects.filter(pk=started.json()["id"]).update(status="stopped")
    charlie.is_staff = True
    charlie.save()
    Membership.objects.create(project=project, user=charlie, role=Role.ANNOTATOR)
    api.force_authenticate(charlie)
    started = api.post(url, {**body, "allow": ALLOWED}, format="json")
    assert started.status_code == 202, started.json()


def test_the_page_offers_allow_to_admins_only_and_refuses_it_from_others(
    client, pool, project, alice, bob
):
    form = {"app": MAIL, "device": pool.serial, "budget": "20", "strategy": "dfs", "seed": 0}
    url = f"/projects/{project.pk}/explorations/"
    client.force_login(bob)
    assert 'name="allow"' not in client.get(url).content.decode()
    refused = client.post(url, {**form, "allow": "pay, checkout"})
    assert refused.status_code == 403
    assert ALLOW_DENIED in refused.content.decode().replace("&#x27;", "'")
    assert not Exploration.objects.exists()

    client.force_login(alice)
    assert 'name="allow"' in client.get(url).content.decode()
    started = client.post(url, {**form, "allow": "pay, checkout"})
    assert started.status_code == 302
    assert Exploration.objects.get().allow == ALLOWED

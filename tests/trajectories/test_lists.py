"""Finding things in long lists: the app filter by part of a name or label, sorting, search."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils.html import escape

from fixtures.generate import generate_record
from formats.jobs import do_start_export, export_scope
from tests.trajectories.builders import make_record
from tests.trajectories.test_api import API, as_user
from trajectories.models import Step, Trajectory
from trajectories.selectors import project_list, trajectory_list
from trajectories.services import do_create_project, do_import_trajectory, do_set_membership
from trajectories.validation import InvalidData, InvalidRequest

pytestmark = pytest.mark.django_db


@pytest.fixture
def three(project):
    """A hand-made trajectory (com.example.shop), a ShopMate one, and one opening "Karten"."""
    plain, _ = do_import_trajectory(project, make_record(steps=2, seed=1))
    shop, _ = do_import_trajectory(project, generate_record(3, steps=6))
    maps, _ = do_import_trajectory(project, make_record(steps=3, seed=2))
    Step.objects.filter(trajectory=maps, index=0).update(
        action_type="open_app",
        action={"type": "open_app", "package": "de.example.navi", "app_label": "Karten"},
    )
    return plain, shop, maps


def everywhere(client, user, project, filters, sort=None) -> list[list[int]]:
    """The ids, in order, as the selector, the page and the API see them (an export: the set)."""
    query = dict(filters, **({"sort": sort} if sort else {}))
    selected = list(trajectory_list(user, project, filters, sort).values_list("pk", flat=True))
    client.force_login(user)
    page = client.get(reverse("trajectory-list", args=[project.pk]), query)
    api = as_user(user).get(f"{API}/projects/{project.pk}/trajectories/", query).json()
    job = do_start_export(project, "waypoint", user, filters)
    exported = set(export_scope(job).values_list("pk", flat=True))
    assert exported == set(selected)
    return [selected, page.context["listed"], [i["id"] for i in api["results"]]]


@pytest.mark.parametrize(
    "typed, expected",
    [
        ("shopmate", "shop"),  # part of com.waypoint.shopmate, the task's and screens' app
        ("ShopMate", "shop"),
        ("karten", "maps"),  # the label of an app a step opened
        ("example.shop", "plain+maps"),
        ("com.waypoint.notes", "shop"),  # a whole package still works
        ('"]', "none"),  # JSON punctuation is not part of a name
    ],
)
def test_the_app_filter_matches_part_of_a_package_or_a_label(
    client, project, three, alice, typed, expected
):
    plain, shop, maps = three
    wanted = {
        "shop": {shop.pk},
        "maps": {maps.pk},
        "plain+maps": {plain.pk, maps.pk},
        "none": set(),
    }[expected]
    for ids in everywhere(client, alice, project, {"app": typed}):
        assert set(ids) == wanted
    job = do_start_export(project, "waypoint", alice, {"apps": f"nothing-here, {typed}"})
    assert set(export_scope(job).values_list("pk", flat=True)) == wanted


def test_page_api_and_selector_sort_alike(client, project, three, alice):
    plain, shop, maps = three
    Trajectory.objects.filter(pk=plain.pk).update(step_count=9)
    by_steps = [plain.pk, shop.pk, maps.pk]
    Trajectory.objects.filter(pk=maps.pk).update(step_count=1)
    for ids in everywhere(client, alice, project, {}, "-steps"):
        assert ids == by_steps
    for ids in everywhere(client, alice, project, {}, "steps"):
        assert ids == by_steps[::-1]
    newest_first = everywhere(client, alice, project, {})[0]
    assert newest_first == [maps.pk, shop.pk, plain.pk]


def test_an_unknown_sort_key_is_a_clear_400(client, project, three, alice):
    message = "sort: unknown sort key 'colour' (known: created, recorded, goal, steps"
    with pytest.raises(InvalidRequest, match=message.replace("(", r"\(")):
        trajectory_list(alice, project, {}, "colour")
    api = as_user(alice).get(f"{API}/projects/{project.pk}/trajectories/?sort=colour")
    assert api.status_code == 400 and api.json()["detail"].startswith(message)
    client.force_login(alice)
    page = client.get(reverse("trajectory-list", args=[project.pk]), {"sort": "colour"})
    assert page.status_code == 400 and escape(message) in page.content.decode()
    assert client.get("/", {"sort": "-owner"}).status_code == 400
    projects = as_user(alice).get(f"{API}/projects/?sort=owner")
    assert projects.status_code == 400
    assert projects.json()["detail"].startswith("sort: unknown sort key 'owner' (known: name")


def test_projects_are_searched_and_sorted_on_the_page_and_in_the_api(client, alice, bob, charlie):
    big = do_create_project("Zoo of shopping apps", alice, "Stores and carts")
    small = do_create_project("Alpine notes", alice)
    do_create_project("Charlie's own", charlie)
    do_set_membership(big, bob, "annotator", alice)
    for seed in range(3):
        do_import_trajectory(big, make_record(steps=1, seed=seed))

    assert list(project_list(alice)) == [small, big]
    assert list(project_list(alice, sort="-trajectories")) == [big, small]
    assert list(project_list(alice, search="CART")) == [big]  # in the description
    assert list(project_list(bob)) == [big]

    client.force_login(alice)
    page = client.get("/", {"q": "alp"}).content.decode()
    assert "Alpine notes" in page and "Zoo of shopping apps" not in page
    page = client.get("/", {"q": "nothing like it"}).content.decode()
    assert "No project matches" in page
    api = as_user(alice).get(f"{API}/projects/", {"sort": "-trajectories"}).json()["results"]
    assert [p["name"] for p in api] == ["Zoo of shopping apps", "Alpine notes"]
    assert api[0]["trajectory_count"] == 3
    api = as_user(alice).get(f"{API}/projects/", {"search": "zoo"}).json()["results"]
    assert [p["name"] for p in api] == ["Zoo of shopping apps"]


def test_a_project_name_longer_than_the_column_is_refused_by_name(alice):
    with pytest.raises(InvalidData, match="^name: at most 200 characters, got 201$"):
        do_create_project("x" * 201, alice)
    assert do_create_project("x" * 200, alice).name == "x" * 200


def test_page_api_and_selector_filter_outcome_and_source_alike(client, project, three, alice):
    plain, shop, maps = three
    Trajectory.objects.filter(pk=plain.pk).update(outcome="failure", source="imported")
    Trajectory.objects.filter(pk=shop.pk).update(outcome="success", source="generated")
    Trajectory.objects.filter(pk=maps.pk).update(outcome="failure", source="recorded")
    cases = [
        ({"outcome": "failure"}, {plain.pk, maps.pk}),
        ({"outcome": "success"}, {shop.pk}),
        ({"source": "recorded"}, {maps.pk}),
        ({"outcome": "failure", "source": "imported"}, {plain.pk}),
        ({"outcome": "uncertain"}, set()),
    ]
    for filters, wanted in cases:
        for ids in everywhere(client, alice, project, filters):
            assert set(ids) == wanted, filters


def test_the_page_has_outcome_and_source_fields_that_keep_their_choice(client, project, alice):
    client.force_login(alice)
    page = client.get(
        reverse("trajectory-list", args=[project.pk]), {"outcome": "failure", "source": "imported"}
    ).content.decode()
    assert '<option value="failure" selected>Failure</option>' in page
    assert '<option value="imported" selected>Imported</option>' in page
    assert "any outcome" in page and "any source" in page
    bad = client.get(reverse("trajectory-list", args=[project.pk]), {"outcome": "great"})
    assert "Some filters are invalid: Outcome" in bad.content.decode()

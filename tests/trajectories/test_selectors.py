"""One trajectory selector: the list page, the API and an export select the same trajectories."""

from __future__ import annotations

import pytest
from django.urls import reverse

from fixtures.generate import generate_record
from formats.jobs import do_start_export, export_scope
from tests.trajectories.builders import make_record
from tests.trajectories.test_api import API, as_user
from trajectories.models import Trajectory
from trajectories.selectors import check_trajectory_filters, trajectory_list
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData, InvalidRequest

pytestmark = pytest.mark.django_db


@pytest.fixture
def three(project):
    first, _ = do_import_trajectory(project, make_record(steps=2, seed=1))
    second, _ = do_import_trajectory(project, make_record(steps=2, seed=2, status="approved"))
    generated, _ = do_import_trajectory(project, generate_record(3, steps=6))
    Trajectory.objects.filter(pk=second.pk).update(recorder_name="bob")
    return first, second, generated


FILTERS = [
    {},
    {"status": "approved"},
    {"recorder": "bob"},
    {"app": "com.example.shop"},
    {"app": "com.waypoint.notes"},
    {"app": "com.example.shop", "status": "annotating"},
]


@pytest.mark.parametrize("filters", FILTERS)
def test_the_page_the_api_and_an_export_select_the_same_trajectories(
    client, project, three, alice, filters
):
    expected = set(trajectory_list(alice, project, filters).values_list("pk", flat=True))

    client.force_login(alice)
    page = client.get(reverse("trajectory-list", args=[project.pk]), filters)
    assert set(page.context["listed"]) == expected

    api = as_user(alice).get(f"{API}/projects/{project.pk}/trajectories/", filters)
    assert api.status_code == 200
    assert {item["id"] for item in api.json()["results"]} == expected

    job = do_start_export(project, "waypoint", alice, filters)
    assert set(export_scope(job).values_list("pk", flat=True)) == expected


def test_filters_by_app_and_recorder_reach_the_api_and_exports(project, three, alice):
    first, second, generated = three
    url = f"{API}/projects/{project.pk}/trajectories/?app=com.waypoint.notes"
    assert [item["id"] for item in as_user(alice).get(url).json()["results"]] == [generated.pk]
    job = do_start_export(project, "waypoint", alice, {"recorder": "bob"})
    assert list(export_scope(job)) == [second]


def test_an_outsider_selects_nothing(project, three, charlie):
    assert not trajectory_list(charlie, project).exists()


def test_a_bad_filter_is_the_same_error_everywhere(client, project, alice):
    with pytest.raises(InvalidData, match="outcome: must be one of success, failure"):
        trajectory_list(alice, project, {"outcome": "great"})
    api = as_user(alice).get(f"{API}/projects/{project.pk}/trajectories/?outcome=great")
    assert api.status_code == 400 and api.json()["detail"].startswith("outcome: must be one of")
    with pytest.raises(InvalidData, match="filters: unknown filter 'colour'"):
        do_start_export(project, "waypoint", alice, {"colour": "red"})


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"recorder": []}, "recorder: must be a string, got []"),
        ({"recorded_to": []}, "filters.recorded_to: list is not a date (YYYY-MM-DD)"),
        ({"nonsense": []}, "filters: unknown filter 'nonsense'"),
    ],
)
def test_an_empty_list_is_unset_only_where_a_list_is_meant(filters, message):
    """Schemathesis sent ``"recorder": []``: it was taken for no filter, against the schema."""
    with pytest.raises(InvalidRequest) as caught:
        check_trajectory_filters(filters)
    assert str(caught.value).startswith(message)
    assert check_trajectory_filters({"apps": [], "recorder": "", "recorded_to": None}) == {}

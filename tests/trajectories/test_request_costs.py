"""What one request of the busiest pages costs: queries bounded whatever the number of rows."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.authtoken.models import Token

from tests.trajectories.builders import make_record
from trajectories.models import Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


def import_many(project, count: int, start: int = 0) -> None:
    for seed in range(start, start + count):
        do_import_trajectory(project, make_record(steps=1, seed=500 + seed, recorded_by="bob"))


def queries_of(client, url: str, **headers) -> int:
    client.get(url, headers=headers)  # warm the session and caches
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, headers=headers)
    assert response.status_code == 200
    return len(captured)


def test_the_newest_first_order_of_lists_is_an_index(db):
    # Every list page would otherwise sort all of a project's rows, whole, to show 25.
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, Trajectory._meta.db_table)
    ordered = [c for c in constraints.values() if c["index"] and not c["unique"]]
    assert ["project_id", "created_at", "id"] in [c["columns"] for c in ordered]


def test_the_list_page_costs_seven_queries_with_1_or_30_rows(client, project, alice):
    url = reverse("trajectory-list", args=[project.pk])
    client.force_login(alice)
    import_many(project, 1)
    # the session, its user, project, recorders, statuses (progress, and the count), page,
    # recent jobs
    assert queries_of(client, url) == 7
    import_many(project, 29, start=1)
    assert queries_of(client, url) == 7
    assert queries_of(client, url + "?page=2&status=annotating&sort=-steps") == 7
    # Another filter needs its own count.
    assert queries_of(client, url + "?recorder=bob") == 8


def test_the_list_page_counts_what_it_lists_whatever_the_filter(client, project, alice):
    import_many(project, 5)
    Trajectory.objects.filter(pk__in=Trajectory.objects.order_by("id")[:2].values("pk")).update(
        status="approved", recorder_name="phone-7", recorded_by=None
    )
    client.force_login(alice)
    url = reverse("trajectory-list", args=[project.pk])
    for query, count in (
        ("", "5 trajectories"),
        ("?status=approved", "2 trajectories"),
        ("?status=rejected", "0 trajectories"),
        ("?recorder=phone-7&status=approved", "2 trajectories"),
        ("?recorder=bob", "3 trajectories"),
    ):
        html = client.get(url + query).content.decode()
        assert f'<p class="muted small">{count}</p>' in html, query
        partial = client.get(
            url + query, headers={"HX-Request": "true", "HX-Target": "trajectory-table"}
        )
        assert f'<p class="muted small">{count}</p>' in partial.content.decode(), query


def test_the_api_list_costs_four_queries_with_1_or_60_rows(client, project, alice):
    url = reverse("api-project-trajectories", args=[project.pk])
    token = Token.objects.create(user=alice)
    auth = {"Authorization": f"Token {token.key}"}
    import_many(project, 1)
    # token with its user, project, count, page
    assert queries_of(client, url, **auth) == 4
    import_many(project, 59, start=1)
    assert queries_of(client, url + "?page_size=60", **auth) == 4


def test_each_api_list_row_links_its_trajectory(client, project, alice):
    import_many(project, 12)
    token = Token.objects.create(user=alice)
    response = client.get(
        reverse("api-project-trajectories", args=[project.pk]),
        headers={"Authorization": f"Token {token.key}"},
    )
    rows = response.json()["results"]
    assert len(rows) == 12
    for row in rows:
        assert row["url"] == f"http://testserver/api/v1/trajectories/{row['id']}/"


def test_the_api_list_rows_are_what_the_generic_serializer_gives(client, project, alice, bob):
    # The list's rows are written out field by field (cheaper under load); they must stay the
    # same, key order and nulls included, as DRF's generic loop over the declared fields.
    from rest_framework import serializers as drf

    from trajectories.serializers import TrajectorySerializer

    import_many(project, 3)
    unrecorded = Trajectory.objects.filter(project=project).order_by("id").first()
    Trajectory.objects.filter(pk=unrecorded.pk).update(
        recorded_by=None, recorded_at=None, recorder_name="phone-7", status="in_review"
    )
    token = Token.objects.create(user=alice)
    response = client.get(
        reverse("api-project-trajectories", args=[project.pk]),
        headers={"Authorization": f"Token {token.key}"},
    )
    rows = response.json()["results"]
    generic = TrajectorySerializer(context={"request": response.wsgi_request})
    trajectories = Trajectory.objects.select_related("task", "recorded_by").in_bulk()
    expected = [
        drf.ModelSerializer.to_representation(generic, trajectories[row["id"]]) for row in rows
    ]
    assert [list(row) for row in rows] == [list(e) for e in expected]
    assert rows == json.loads(json.dumps(expected))
    by_id = {row["id"]: row for row in rows}
    assert by_id[unrecorded.pk]["recorded_by"] is None
    assert by_id[unrecorded.pk]["recorded_at"] is None
    assert by_id[unrecorded.pk]["recorder_name"] == "phone-7"
    assert {row["recorded_by"] for row in rows} == {None, "bob"}
    assert all(row["created_at"].endswith("Z") for row in rows)


def test_the_api_list_writes_dates_as_the_generic_serializer_in_any_time_zone(
    client, project, alice
):
    # UTC dates take a shortcut; another current time zone takes DRF's field (with offset).
    from django.utils import timezone
    from rest_framework import serializers as drf

    from trajectories.serializers import TrajectorySerializer

    import_many(project, 2)
    Trajectory.objects.update(created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    token = Token.objects.create(user=alice)
    url = reverse("api-project-trajectories", args=[project.pk])
    for zone, created in (
        ("UTC", "2026-01-02T03:04:05Z"),
        ("Europe/Berlin", "2026-01-02T04:04:05+01:00"),
    ):
        with timezone.override(zone):
            response = client.get(url, headers={"Authorization": f"Token {token.key}"})
            rows = response.json()["results"]
            generic = TrajectorySerializer(context={"request": response.wsgi_request})
            by_id = Trajectory.objects.select_related("task", "recorded_by").in_bulk()
            expected = [
                drf.ModelSerializer.to_representation(generic, by_id[r["id"]]) for r in rows
            ]
        assert {row["created_at"] for row in rows} == {created}
        assert rows == json.loads(json.dumps(expected))

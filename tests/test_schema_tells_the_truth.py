"""The OpenAPI schema says what the API does: a value it shows is one the schema allows, a
request the schema calls invalid is refused, and closed sets are enums.

alice is the project's admin, bob an annotator.
"""

from __future__ import annotations

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from annotate.services import do_assign
from tests.trajectories.builders import make_record
from trajectories.models import AnchorType, Job, JobKind, Relation
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def components() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]


def enum_of(schema: dict, prop: dict) -> list:
    """The enum a property names, directly or through a component."""
    ref = prop.get("$ref") or next(
        (p["$ref"] for p in prop.get("allOf", []) + prop.get("oneOf", []) if "$ref" in p), None
    )
    return schema[ref.rsplit("/", 1)[1]]["enum"] if ref else prop["enum"]


@pytest.fixture
def imported(project, alice, bob):
    """A trajectory recorded by someone of another lab: no user of this instance."""
    record = make_record(steps=3, seed=5, recorded_by="a recorder of another lab")
    trajectory, _ = do_import_trajectory(project, record)
    do_assign(trajectory, bob, alice)
    return trajectory


def test_a_trajectory_no_user_recorded_shows_recorded_by_null_as_the_schema_allows(
    project, alice, imported
):
    client = client_of(alice)
    listed = client.get(f"/api/v1/projects/{project.pk}/trajectories/").json()["results"]
    shown = client.get(f"/api/v1/trajectories/{imported.pk}/").json()
    assert [row["recorded_by"] for row in listed] == [None]
    assert (shown["recorded_by"], shown["recorder_name"]) == (None, "a recorder of another lab")
    schema = components()
    for name in ("Trajectory", "TrajectoryDetail"):
        assert schema[name]["properties"]["recorded_by"]["nullable"] is True
    for name in ("Job", "Project", "MemoryGraph", "AppGraph"):
        assert schema[name]["properties"]["created_by"]["nullable"] is True


def test_a_job_no_user_started_shows_created_by_null(project, alice):
    job = Job.objects.create(project=project, kind=JobKind.EXPORT, format="waypoint")
    assert client_of(alice).get(f"/api/v1/jobs/{job.pk}/").json()["created_by"] is None


def test_an_export_of_an_empty_trajectory_id_is_refused_not_an_export_of_everything(
    project, alice, imported
):
    response = client_of(alice).post(
        f"/api/v1/projects/{project.pk}/exports/",
        {"format": "waypoint", "filters": {"trajectories": [""]}},
        content_type="application/json",
    )
    assert (response.status_code, response.json()) == (
        400,
        {"detail": "filters.trajectories: '' is not a trajectory id"},
    )
    # Ids typed with commas may end with one: an empty part there is no id.
    response = client_of(alice).post(
        f"/api/v1/projects/{project.pk}/exports/",
        {"format": "waypoint", "filters": {"trajectories": f"{imported.uid},"}},
        content_type="application/json",
    )
    assert response.status_code == 202
    assert response.json()["params"]["filters"] == {"trajectories": [str(imported.uid)]}


def test_an_empty_date_filter_filters_nothing_and_the_schema_says_so(project, alice):
    response = client_of(alice).post(
        f"/api/v1/projects/{project.pk}/exports/",
        {"format": "waypoint", "filters": {"recorded_to": "", "recorded_from": "2026-01-01"}},
        content_type="application/json",
    )
    assert response.status_code == 202
    assert response.json()["params"]["filters"] == {"recorded_from": "2026-01-01"}
    schema = components()
    name = "ExportRequestRequest"
    recorded_to = schema[name]["properties"]["filters"]["properties"]["recorded_to"]
    assert {"type": "string", "enum": [""]} in recorded_to["anyOf"]
    assert {"type": "string", "format": "date"} in recorded_to["anyOf"]


def test_bounds_beyond_the_documented_integers_are_refused(imported, bob):
    minimum = components()["EvidenceRequest"]["properties"]["bounds"]["items"]["minimum"]
    assert minimum == -(2**31)
    response = client_of(bob).post(
        f"/api/v1/trajectories/{imported.pk}/memory-targets/",
        {
            "version": imported.version,
            "key": "price",
            "value": "12.50",
            "encode_step": 0,
            "evidence": {"bounds": [minimum - 1, 0, 10, 10]},
        },
        content_type="application/json",
    )
    assert (response.status_code, response.json()) == (
        400,
        {
            "detail": "evidence.bounds[0]: must be between -2147483648 and 2147483647, "
            "got -2147483649"
        },
    )


def test_anchor_types_relations_and_statuses_are_enums_in_the_schema():
    schema = components()
    anchor_types = sorted(AnchorType.values)
    for name in ("AnchorRequestRequest", "AnchorPatchRequest", "AnchorLabel", "Anchor"):
        assert sorted(enum_of(schema, schema[name]["properties"]["type"])) == anchor_types
    for name in ("LinkLabel", "AnchorLink"):
        assert sorted(enum_of(schema, schema[name]["properties"]["relation"])) == sorted(
            Relation.values
        )
    assert "approved" in enum_of(schema, schema["Labels"]["properties"]["status"])
    assert "approved" in enum_of(schema, schema["Assignment"]["properties"]["status"])
    assert "accepted" in enum_of(schema, schema["Proposal"]["properties"]["status"])


def test_an_unknown_anchor_type_is_refused_with_the_known_ones(imported, bob):
    response = client_of(bob).post(
        f"/api/v1/trajectories/{imported.pk}/anchors/",
        {"version": imported.version, "step": 0, "type": "note", "content": "c"},
        content_type="application/json",
    )
    assert (response.status_code, response.json()) == (
        400,
        {
            "detail": "type: unknown anchor type 'note' (known: subgoal, state_change, "
            "dependency, exception, context_info, finish)"
        },
    )

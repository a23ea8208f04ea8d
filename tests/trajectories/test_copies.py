"""A second annotator's copy is labelling work, not another episode: lists and exports skip it."""

import io
import json

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from formats.jobs import export_scope
from trajectories.models import Job
from trajectories.services import do_import_trajectory

from .builders import make_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def original_and_copy(project):
    original, _ = do_import_trajectory(project, make_record(steps=2, seed=51))
    copy, _ = do_import_trajectory(project, make_record(steps=2, seed=52))
    copy.copy_of = original
    copy.save(update_fields=["copy_of"])
    return original, copy


def test_the_export_command_skips_copies(project, original_and_copy, tmp_path):
    original, _ = original_and_copy
    call_command(
        "export_trajectories",
        "--project",
        project.pk,
        "--out",
        tmp_path / "out",
        stdout=io.StringIO(),
    )
    lines = (tmp_path / "out" / "trajectories.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [str(original.uid)]


def test_export_jobs_skip_copies(project, original_and_copy, alice):
    original, _ = original_and_copy
    job = Job.objects.create(project=project, kind="export", format="waypoint", created_by=alice)
    assert list(export_scope(job)) == [original]


def test_lists_skip_copies(project, original_and_copy, alice, client):
    original, copy = original_and_copy
    api = APIClient()
    api.force_authenticate(alice)
    listed = api.get(f"/api/v1/projects/{project.pk}/trajectories/").json()["results"]
    assert [t["id"] for t in listed] == [original.pk]
    client.force_login(alice)
    page = client.get(f"/projects/{project.pk}/trajectories/").content.decode()
    assert f"/trajectories/{original.pk}/" in page
    assert f"/trajectories/{copy.pk}/" not in page

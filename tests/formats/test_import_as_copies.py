"""An export of one project imports into another on the same instance as copies: new ids."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from formats.catalogue import export_trajectories, import_trajectories
from tests.trajectories.builders import make_record
from trajectories.jobs import run_job
from trajectories.models import AnchorLink, Job, MemoryTarget, Screen, Step, Subgoal, Trajectory
from trajectories.services import do_create_project, do_import_trajectory

from .test_native_format import files_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def exported_a(project, tmp_path) -> Path:
    do_import_trajectory(project, make_record(steps=3, seed=1))
    do_import_trajectory(project, make_record(steps=5, seed=2))
    out = tmp_path / "a"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    return out


@pytest.fixture
def project_b(alice):
    return do_create_project("Shops, second round", alice)


def sizes(project) -> dict[str, int]:
    return {
        "trajectories": Trajectory.objects.filter(project=project).count(),
        "screens": Screen.objects.filter(trajectory__project=project).count(),
        "steps": Step.objects.filter(trajectory__project=project).count(),
        "subgoals": Subgoal.objects.filter(trajectory__project=project).count(),
        "memory_targets": MemoryTarget.objects.filter(trajectory__project=project).count(),
        "links": AnchorLink.objects.filter(source__trajectory__project=project).count(),
    }


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "trajectories.jsonl").open()]


def test_it_says_to_import_as_copies_when_the_ids_are_taken(project, project_b, exported_a):
    first = records(exported_a)[0]["id"]
    with pytest.raises(CommandError) as caught:
        call_command("import_trajectories", exported_a, "--project", project_b.pk)
    assert str(caught.value) == (
        f"import failed, nothing was imported: trajectories.jsonl line 1: trajectory {first} "
        "already exists in another project; use 'import as copies' to import it with a new id"
    )
    assert sizes(project_b)["trajectories"] == 0


def test_a_round_trip_through_another_project_keeps_everything_but_the_ids(
    project, project_b, exported_a, tmp_path
):
    out = io.StringIO()
    call_command(
        "import_trajectories", exported_a, "--project", project_b.pk, "--as-copies", stdout=out
    )
    assert out.getvalue() == "imported 2 trajectories (8 steps); 0 were already present\n"
    assert (
        sizes(project_b)
        == sizes(project)
        == {
            "trajectories": 2,
            "screens": 10,
            "steps": 8,
            "subgoals": 4,
            "memory_targets": 2,
            "links": 2,
        }
    )
    exported_b = tmp_path / "b"
    export_trajectories(Trajectory.objects.filter(project=project_b), exported_b)

    originals = {r["id"]: r for r in records(exported_a)}
    copies = records(exported_b)
    assert {c["metadata"]["copied_from"]["id"] for c in copies} == set(originals)
    for copy in copies:
        origin = copy["metadata"].pop("copied_from")
        assert origin == {"id": origin["id"], "project": "Shops"}
        original = originals[origin["id"]]
        assert copy.pop("id") != original.pop("id")
        assert copy == original
    files_a, files_b = files_of(exported_a), files_of(exported_b)
    assert set(files_a) == set(files_b)
    for name in files_a:
        if name.startswith(("screens/", "xml/")):
            assert files_b[name] == files_a[name]
    assert json.loads(files_b["manifest.json"])["project"] == "Shops, second round"
    assert (
        json.loads(files_b["manifest.json"])["counts"]
        == json.loads(files_a["manifest.json"])["counts"]
    )


def test_importing_the_copies_again_adds_nothing(project_b, exported_a):
    assert import_trajectories(project_b, exported_a, as_copies=True)["created"] == 2
    again = import_trajectories(project_b, exported_a, as_copies=True)
    assert again == {"created": 0, "existing": 2, "steps": 0}
    assert sizes(project_b)["trajectories"] == 2


def test_copies_are_listed_as_trajectories_of_their_new_project(project_b, exported_a):
    import_trajectories(project_b, exported_a, as_copies=True)
    assert project_b.trajectories.originals().count() == 2
    copy = project_b.trajectories.get(step_count=5)
    assert (copy.source, copy.status, copy.outcome) == ("recorded", "annotating", "success")
    assert copy.metadata["note"] == "ünïcode ✓"


def zip_of(folder: Path) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in files_of(folder).items():
            archive.writestr(f"export/{name}", data)
    return out.getvalue()


def test_the_import_page_imports_as_copies(client, project_b, exported_a, alice):
    client.force_login(alice)
    page = client.get(reverse("project-import", args=[project_b.pk]))
    assert b'name="as_copies"' in page.content
    response = client.post(
        reverse("project-import", args=[project_b.pk]),
        {"file": SimpleUploadedFile("a.zip", zip_of(exported_a)), "as_copies": "on"},
    )
    job = Job.objects.get()
    assert response["Location"] == reverse("job-detail", args=[job.pk])
    run_job(job.pk)
    job.refresh_from_db()
    assert (job.status, job.counts) == ("succeeded", {"created": 2, "existing": 0, "steps": 8})
    assert sizes(project_b)["steps"] == 8


def test_the_import_page_says_to_import_as_copies(client, project_b, exported_a, alice):
    client.force_login(alice)
    client.post(
        reverse("project-import", args=[project_b.pk]),
        {"file": SimpleUploadedFile("a.zip", zip_of(exported_a))},
    )
    job = Job.objects.get()
    run_job(job.pk)
    job.refresh_from_db()
    first = records(exported_a)[0]["id"]
    assert (job.status, job.message) == (
        "failed",
        f"trajectories.jsonl line 1: trajectory {first} already exists in another project; "
        "use 'import as copies' to import it with a new id",
    )
    assert sizes(project_b)["trajectories"] == 0


def test_the_api_imports_as_copies(project_b, exported_a, alice):
    api = APIClient()
    api.force_authenticate(alice)
    response = api.post(
        f"/api/v1/projects/{project_b.pk}/imports/",
        {"file": SimpleUploadedFile("a.zip", zip_of(exported_a)), "as_copies": "true"},
        format="multipart",
    )
    assert response.status_code == 202
    run_job(response.json()["id"])
    assert sizes(project_b)["trajectories"] == 2

"""The import page, the API and the command tell an archive's format from its content."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from formats.catalogue import export_trajectories
from tests.trajectories.builders import make_record
from trajectories.models import Job, Trajectory
from trajectories.services import do_import_trajectory

from .test_droidbot import DROIDBOT

pytestmark = pytest.mark.django_db

LOOKED_FOR = (
    'looked for manifest.json with "format": "waypoint" (a Waypoint export) '
    "and for the folders states/ and events/ (DroidBot output), "
    "for *.jsonl task files (or *.json and images/) at the top (AndroTMem-Bench), "
    "for TFRecord shards named android_control-* (AndroidControl) or holding "
    "AitW steps (Android in the Wild), "
    "for the folders annotations/ and screenshots/ (GUI-Odyssey)"
)


@pytest.fixture
def exported(project, tmp_path) -> Path:
    do_import_trajectory(project, make_record(steps=2, seed=8))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    Trajectory.objects.all().delete()
    return out


def zipped(files: dict[str, bytes], name: str = "data.zip") -> SimpleUploadedFile:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    return SimpleUploadedFile(name, out.getvalue(), content_type="application/zip")


def folder_files(folder: Path, prefix: str = "") -> dict[str, bytes]:
    return {
        prefix + p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def post_import(client, project, upload, **fields):
    return client.post(reverse("project-import", args=[project.pk]), {"file": upload, **fields})


def test_the_import_page_detects_by_default(client, project, alice):
    client.force_login(alice)
    response = client.get(reverse("project-import", args=[project.pk]))
    assert b'<option value="auto" selected>Detect from the archive</option>' in response.content


def test_it_detects_a_waypoint_export_in_a_top_folder(client, project, alice, exported):
    client.force_login(alice)
    response = post_import(client, project, zipped(folder_files(exported, "export/")))
    assert response.status_code == 302
    assert Job.objects.get().format == "waypoint"


def test_it_detects_droidbot_output(client, project, bob):
    client.force_login(bob)
    post_import(client, project, zipped(folder_files(DROIDBOT, "report/"), "run.zip"))
    assert Job.objects.get().format == "droidbot"


def test_it_detects_a_tar_gz(client, project, alice, exported, tmp_path):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        archive.add(exported, arcname=".")
    client.force_login(alice)
    post_import(client, project, SimpleUploadedFile("export.tar.gz", out.getvalue()))
    assert Job.objects.get().format == "waypoint"


@pytest.mark.parametrize(
    "files, message",
    [
        (
            {"data/trajectories.jsonl": b""},
            f"file: data.zip: cannot tell the import format: {LOOKED_FOR}",
        ),
        (
            {"manifest.json": json.dumps({"format": "memory-world"}).encode()},
            "file: data.zip: cannot tell the import format: manifest.json names the format "
            f"'memory-world'; {LOOKED_FOR}",
        ),
        (
            {"states/state_1.json": b"{}"},
            f"file: data.zip: cannot tell the import format: {LOOKED_FOR}",
        ),
    ],
)
def test_it_names_what_it_looked_for_in_an_unknown_archive(client, project, alice, files, message):
    client.force_login(alice)
    response = post_import(client, project, zipped(files), format="auto")
    assert response.status_code == 200
    assert response.context["form"].non_field_errors() == [message]
    assert not Job.objects.exists()


def test_it_detects_an_androtmem_export_by_its_manifest(client, project, alice):
    client.force_login(alice)
    files = {"bench/manifest.json": json.dumps({"format": "androtmem"}).encode()}
    post_import(client, project, zipped(files | {"bench/test.jsonl": b""}), format="auto")
    assert Job.objects.get().format == "androtmem"


def test_a_chosen_format_is_kept(client, project, alice, exported):
    client.force_login(alice)
    post_import(client, project, zipped(folder_files(exported)), format="droidbot")
    assert Job.objects.get().format == "droidbot"


def test_the_api_detects_when_no_format_is_given(project, alice, exported):
    api = APIClient()
    api.force_authenticate(alice)
    response = api.post(
        f"/api/v1/projects/{project.pk}/imports/",
        {"file": zipped(folder_files(exported))},
        format="multipart",
    )
    assert response.status_code == 202
    assert response.json()["format"] == "waypoint"


def test_the_command_detects_droidbot_output(project):
    out = io.StringIO()
    call_command("import_trajectories", DROIDBOT, "--project", project.pk, stdout=out)
    assert out.getvalue() == "imported 9 trajectories (26 steps); 0 were already present\n"


def test_the_command_names_what_it_looked_for(project, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "readme.txt").write_text("hello")
    with pytest.raises(CommandError) as caught:
        call_command("import_trajectories", folder, "--project", project.pk)
    assert str(caught.value) == (
        f"import failed, nothing was imported: notes: cannot tell the import format: {LOOKED_FOR}"
    )

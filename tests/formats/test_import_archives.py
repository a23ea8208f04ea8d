"""Archives may unpack to a bounded size: in bytes, and relative to their own size."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command

from formats.archive import UnpackBudget, human_size
from formats.catalogue import export_trajectories, import_trajectories
from formats.jobs import do_start_import
from tests.trajectories.builders import make_record
from tests.trajectories.test_api import API, as_user
from trajectories.jobs import run_job
from trajectories.models import Job, Trajectory
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db

MiB = 1024**2


def zip_of_zeros(path: Path, members: int = 16, size: int = 4 * MiB) -> Path:
    """A small zip of ``members`` files of ``size`` zero bytes each (a zip bomb, scaled down)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for i in range(members):
            archive.writestr(f"export/zeros-{i:02}.bin", bytes(size))
    return path


def tar_gz_of_zeros(path: Path, members: int = 4, size: int = 4 * MiB) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for i in range(members):
            info = tarfile.TarInfo(f"export/zeros-{i}.bin")
            info.size = size
            archive.addfile(info, io.BytesIO(bytes(size)))
    return path


def ratio_message(name: str, unpacked: int, packed: int, at_least: bool = False) -> str:
    size = f"at least {human_size(unpacked)}" if at_least else human_size(unpacked)
    return (
        f"{name}: unpacks to {size}, {unpacked // packed} times its own "
        f"{human_size(packed)}; the limit is 100 times (WAYPOINT_MAX_UNPACK_RATIO)"
    )


def test_a_zip_bomb_is_refused_before_anything_is_unpacked(project, tmp_path):
    bomb = zip_of_zeros(tmp_path / "bomb.zip")
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, bomb, workdir=work)
    assert str(caught.value) == ratio_message("bomb.zip", 64 * MiB, bomb.stat().st_size)
    assert list(work.iterdir()) == []


def test_the_command_refuses_a_zip_bomb(project, tmp_path):
    bomb = zip_of_zeros(tmp_path / "bomb.zip")
    with pytest.raises(CommandError) as caught:
        call_command("import_trajectories", bomb, "--project", project.pk, stdout=io.StringIO())
    assert str(caught.value) == (
        "import failed, nothing was imported: "
        + ratio_message("bomb.zip", 64 * MiB, bomb.stat().st_size)
    )


def test_the_api_refuses_a_zip_bomb_before_queueing_it(project, alice, tmp_path):
    bomb = zip_of_zeros(tmp_path / "bomb.zip")
    response = as_user(alice).post(
        f"{API}/projects/{project.pk}/imports/",
        {"file": ContentFile(bomb.read_bytes(), name="bomb.zip"), "format": "waypoint"},
        format="multipart",
    )
    assert response.status_code == 422  # a well-formed upload the import rules refuse
    assert response.json() == {
        "detail": ratio_message("file: bomb.zip", 64 * MiB, bomb.stat().st_size)
    }
    assert not Job.objects.exists()


def test_a_tar_gz_bomb_fails_its_job_by_name(project, alice, tmp_path):
    bomb = tar_gz_of_zeros(tmp_path / "bomb.tar.gz")
    job = do_start_import(
        project, ContentFile(bomb.read_bytes(), name="bomb.tar.gz"), "waypoint", alice
    )
    run_job(job.pk)
    job.refresh_from_db()
    assert (job.status, job.message) == (
        "failed",
        # Its headers are read only until the limit is passed, at the first of four members.
        ratio_message("bomb.tar.gz", 4 * MiB, bomb.stat().st_size, at_least=True),
    )


@pytest.fixture
def exported_zip(project, tmp_path) -> Path:
    do_import_trajectory(project, make_record(steps=2, seed=3))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    Trajectory.objects.all().delete()
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(out.rglob("*")):
            zipped.write(path, f"export/{path.relative_to(out)}")
    return archive


def test_an_export_imports_within_the_limits(project, exported_zip):
    assert import_trajectories(project, exported_zip)["created"] == 1


def test_the_absolute_limit_is_a_setting(project, exported_zip, settings):
    settings.WAYPOINT_MAX_UNPACKED_BYTES = 1000
    with zipfile.ZipFile(exported_zip) as archive:
        total = sum(i.file_size for i in archive.infolist() if not i.is_dir())
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, exported_zip)
    assert str(caught.value) == (
        f"export.zip: unpacks to {human_size(total)}, over the limit of 1000 bytes "
        "(WAYPOINT_MAX_UNPACKED_BYTES)"
    )
    assert not Trajectory.objects.exists()


def test_the_ratio_is_a_setting(project, exported_zip, settings):
    settings.WAYPOINT_MAX_UNPACK_RATIO = 1
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, exported_zip)
    assert "the limit is 1 times (WAYPOINT_MAX_UNPACK_RATIO)" in str(caught.value)


# Headers can lie: what is written is counted too.


def test_a_member_longer_than_its_header_says_is_refused_while_it_streams(tmp_path):
    budget = UnpackBudget("liar.zip", packed=10 * MiB)
    with pytest.raises(InvalidData) as caught:
        budget.copy(io.BytesIO(bytes(3 * MiB)), tmp_path / "out", 100, "liar.zip: export/a.bin")
    assert str(caught.value) == (
        "liar.zip: export/a.bin: holds more than the 100 bytes its header says"
    )
    assert (tmp_path / "out").stat().st_size <= 100


def test_the_ratio_is_counted_while_members_stream(tmp_path):
    budget = UnpackBudget("liar.zip", packed=10_000)
    budget.copy(io.BytesIO(bytes(600_000)), tmp_path / "a", 600_000, "liar.zip: a")
    with pytest.raises(InvalidData) as caught:
        budget.copy(io.BytesIO(bytes(600_000)), tmp_path / "b", 600_000, "liar.zip: b")
    assert str(caught.value) == (
        "liar.zip: unpacks to at least 1.1 MiB, 120 times its own 9.8 KiB; "
        "the limit is 100 times (WAYPOINT_MAX_UNPACK_RATIO)"
    )


def test_the_api_names_a_zip_whose_central_directory_is_broken(project, alice):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("export/manifest.json", "{}")
    data = bytearray(out.getvalue())
    at = data.find(b"PK\x01\x02")
    data[at : at + 4] = b"XXXX"
    response = as_user(alice).post(
        f"{API}/projects/{project.pk}/imports/",
        {"file": ContentFile(bytes(data), name="broken.zip"), "format": "waypoint"},
        format="multipart",
    )
    assert response.status_code == 422
    assert response.json() == {
        "detail": "file: broken.zip is not a readable .zip archive "
        "(Bad magic number for central directory)"
    }


# ---------------------------------------------------------------- how many members


def zip_of_empty_files(path: Path, members: int) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for i in range(members):
            archive.writestr(f"export/empty-{i:03}", b"")
    return path


def test_a_zip_of_more_members_than_the_limit_is_refused_before_anything_is_unpacked(
    project, tmp_path, settings
):
    settings.WAYPOINT_MAX_ARCHIVE_MEMBERS = 5
    many = zip_of_empty_files(tmp_path / "many.zip", 6)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, many, workdir=work)
    assert str(caught.value) == (
        "many.zip: holds at least 6 members, over the limit of 5 (WAYPOINT_MAX_ARCHIVE_MEMBERS)"
    )
    assert list(work.iterdir()) == []


def test_a_zip_whose_end_record_understates_its_members_is_refused_once_they_are_read(
    project, tmp_path, settings
):
    settings.WAYPOINT_MAX_ARCHIVE_MEMBERS = 5
    liar = zip_of_empty_files(tmp_path / "liar.zip", 9)
    data = bytearray(liar.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    data[end + 8 : end + 12] = (1).to_bytes(2, "little") * 2  # "1 member" on disk and in all
    liar.write_bytes(bytes(data))
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, liar, workdir=tmp_path)
    assert str(caught.value) == (
        "liar.zip: holds 9 members, over the limit of 5 (WAYPOINT_MAX_ARCHIVE_MEMBERS)"
    )


def test_a_tar_of_more_members_than_the_limit_is_refused_as_its_headers_are_read(
    project, tmp_path, settings
):
    settings.WAYPOINT_MAX_ARCHIVE_MEMBERS = 5
    many = tmp_path / "many.tar"
    with tarfile.open(many, "w") as archive:
        for i in range(50):
            archive.addfile(tarfile.TarInfo(f"export/empty-{i:03}"), io.BytesIO())
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, many, workdir=work)
    assert str(caught.value) == (
        "many.tar: holds at least 6 members, over the limit of 5 (WAYPOINT_MAX_ARCHIVE_MEMBERS)"
    )
    assert list(work.iterdir()) == []


def test_the_api_refuses_a_zip_of_too_many_members_before_queueing_it(
    project, alice, tmp_path, settings
):
    settings.WAYPOINT_MAX_ARCHIVE_MEMBERS = 5
    many = zip_of_empty_files(tmp_path / "many.zip", 6)
    response = as_user(alice).post(
        f"{API}/projects/{project.pk}/imports/",
        {"file": ContentFile(many.read_bytes(), name="many.zip"), "format": "waypoint"},
        format="multipart",
    )
    assert response.status_code == 422
    assert response.json() == {
        "detail": "file: many.zip: holds at least 6 members, over the limit of 5 "
        "(WAYPOINT_MAX_ARCHIVE_MEMBERS)"
    }
    assert not Job.objects.exists()


def test_an_export_within_the_member_limit_imports(project, exported_zip, settings):
    with zipfile.ZipFile(exported_zip) as archive:
        settings.WAYPOINT_MAX_ARCHIVE_MEMBERS = len(archive.infolist())
    summary = import_trajectories(project, exported_zip)
    assert summary["created"] == 1

"""A refused import writes nothing: every check, ids included, runs before the first write."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from formats.catalogue import ImportStopped, export_trajectories, import_trajectories
from tests.trajectories.builders import make_record
from trajectories.models import Anchor, Blob, Screen, Step, Subgoal, Trajectory
from trajectories.services import do_create_project, do_import_trajectory
from trajectories.validation import InvalidData

from .test_native_format import rewrite

pytestmark = pytest.mark.django_db


def sizes() -> dict[str, int]:
    return {
        "trajectories": Trajectory.objects.count(),
        "screens": Screen.objects.count(),
        "steps": Step.objects.count(),
        "subgoals": Subgoal.objects.count(),
        "anchors": Anchor.objects.count(),
    }


@pytest.fixture
def secret(charlie):
    """A project alice cannot see."""
    return do_create_project("Charlie's secret lab", charlie)


@pytest.fixture
def second_line_taken(secret, tmp_path) -> tuple[Path, str]:
    """An export whose line 1 is new to everyone and whose line 2 is a trajectory of ``secret``."""
    do_import_trajectory(secret, make_record(steps=3, seed=1))
    do_import_trajectory(secret, make_record(steps=12, seed=2))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=secret), out)
    first, second = (json.loads(line)["id"] for line in (out / "trajectories.jsonl").open())
    Trajectory.objects.filter(uid=first).delete()
    return out, second


def test_it_refuses_an_id_taken_by_another_project_before_writing_anything(
    project, second_line_taken
):
    source, taken = second_line_taken
    before = sizes()
    blobs = Blob.objects.count()
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, source)
    assert str(caught.value) == (
        f"trajectories.jsonl line 2: trajectory {taken} already exists in another project; "
        "use 'import as copies' to import it with a new id"
    )
    assert sizes() == before
    assert Blob.objects.count() == blobs
    assert not project.trajectories.exists()


def test_the_error_does_not_name_the_other_project(project, second_line_taken):
    source, _ = second_line_taken
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, source)
    assert "secret" not in str(caught.value).lower()


def test_the_command_imports_nothing_when_it_says_so(project, second_line_taken):
    source, taken = second_line_taken
    before = sizes()
    with pytest.raises(CommandError) as caught:
        call_command("import_trajectories", source, "--project", project.pk, stdout=io.StringIO())
    assert str(caught.value) == (
        "import failed, nothing was imported: trajectories.jsonl line 2: trajectory "
        f"{taken} already exists in another project; use 'import as copies' to import it "
        "with a new id"
    )
    assert sizes() == before


def test_it_refuses_the_same_id_twice_in_one_file_naming_both_lines(project, tmp_path):
    do_import_trajectory(project, make_record(steps=2, seed=4))
    do_import_trajectory(project, make_record(steps=3, seed=5))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    Trajectory.objects.all().delete()
    rewrite(out, lambda lines: lines.append(lines[0]))
    uid = json.loads((out / "trajectories.jsonl").read_text().splitlines()[0])["id"]
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, out)
    assert str(caught.value) == (
        f"trajectories.jsonl line 3: trajectory {uid} appears twice: "
        "already at trajectories.jsonl line 1"
    )
    assert sizes() == {"trajectories": 0, "screens": 0, "steps": 0, "subgoals": 0, "anchors": 0}


# ---------------------------------------------------------------- hostile JSON and archives


@pytest.fixture
def fresh(project, tmp_path) -> Path:
    do_import_trajectory(project, make_record(steps=2, seed=6))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    Trajectory.objects.all().delete()
    return out


def refused(project, source) -> str:
    before = sizes()
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, source)
    assert sizes() == before
    return str(caught.value)


def test_it_refuses_json_nested_too_deeply(project, fresh):
    rewrite(fresh, lambda lines: lines.__setitem__(0, "[" * 100_000))
    assert refused(project, fresh) == "trajectories.jsonl line 1: invalid JSON: nested too deeply"


def test_it_refuses_a_manifest_nested_too_deeply(project, fresh):
    (fresh / "manifest.json").write_text("[" * 100_000)
    assert refused(project, fresh) == "manifest.json: invalid JSON: nested too deeply"


def test_it_refuses_an_integer_of_5000_digits(project, fresh):
    def widen(lines):
        lines[0] = json.dumps(lines[0]).replace('"width": 120', '"width": 1' + "0" * 5000, 1)

    rewrite(fresh, widen)
    assert refused(project, fresh) == (
        "trajectories.jsonl line 1: invalid JSON: a number has more than 4300 digits"
    )


def test_the_job_names_the_json_error_instead_of_an_internal_error(project, fresh, alice):
    from django.core.files.base import ContentFile

    from formats.jobs import do_start_import
    from trajectories.jobs import run_job
    from trajectories.models import Job

    rewrite(fresh, lambda lines: lines.__setitem__(0, "[" * 100_000))
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for path in sorted(fresh.rglob("*")):
            archive.write(path, f"export/{path.relative_to(fresh)}")
    job = do_start_import(project, ContentFile(data.getvalue(), name="deep.zip"), "waypoint", alice)
    run_job(job.pk)
    job = Job.objects.get(pk=job.pk)
    assert (job.status, job.message) == (
        "failed",
        "trajectories.jsonl line 1: invalid JSON: nested too deeply",
    )


def test_it_refuses_droidbot_json_nested_too_deeply(project, tmp_path):
    from .test_droidbot import copy_run

    run = copy_run(tmp_path)
    state = sorted((run / "states").glob("state_*.json"))[0]
    state.write_text("[" * 100_000)
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, run, "droidbot")
    assert str(caught.value) == f"states/{state.name}: invalid JSON: nested too deeply"


@pytest.mark.parametrize(
    "members",
    [
        ["export/screens", "export/screens/a.png"],
        ["export/screens/a.png", "export/screens"],
        ["export/screens/", "export/screens"],
    ],
)
def test_it_refuses_a_zip_with_a_file_and_a_folder_of_the_same_name(project, tmp_path, members):
    archive = tmp_path / "clash.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("export/manifest.json", "{}")
        for name in members:
            out.writestr(name, "" if name.endswith("/") else "x")
    assert refused(project, archive) == "clash.zip: 'export/screens' is both a file and a folder"


def test_it_refuses_a_tar_with_a_file_and_a_folder_of_the_same_name(project, tmp_path):
    archive = tmp_path / "clash.tar"
    with tarfile.open(archive, "w") as out:
        for name in ("export/xml", "export/xml/a.xml"):
            info = tarfile.TarInfo(name)
            info.size = 1
            out.addfile(info, io.BytesIO(b"x"))
    assert refused(project, archive) == "clash.tar: 'export/xml' is both a file and a folder"


def test_it_refuses_a_number_too_large_for_the_database_before_writing(project, tmp_path):
    do_import_trajectory(project, make_record(steps=2, seed=4))
    do_import_trajectory(project, make_record(steps=3, seed=5))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    Trajectory.objects.all().delete()
    rewrite(out, lambda lines: lines[1]["device"].update(density=10**30))
    assert refused(project, out) == (
        f"trajectories.jsonl line 2: device.density: must be at most 2147483647, got {10**30}"
    )


def test_an_id_taken_while_the_import_runs_is_reported_honestly(project, secret, tmp_path):
    """Another project takes line 2's id between the checks and the writes."""
    records = {r.uid: r for r in (make_record(steps=2, seed=11), make_record(steps=3, seed=12))}
    for record in records.values():
        do_import_trajectory(project, record)
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    Trajectory.objects.all().delete()
    second = records[json.loads((out / "trajectories.jsonl").read_text().splitlines()[1])["id"]]

    def meanwhile(done: int, total: int) -> None:
        if done == total // 2:  # the last check has passed; nothing is written yet
            do_import_trajectory(secret, second)

    with pytest.raises(ImportStopped) as caught:
        import_trajectories(project, out, progress=meanwhile)
    assert str(caught.value) == (
        f"import stopped: trajectories.jsonl line 2: trajectory {second.uid} already exists in "
        "another project; use 'import as copies' to import it with a new id; 1 trajectory was "
        "imported before it (importing the same archive again resumes)"
    )
    assert project.trajectories.count() == 1


def test_an_error_no_check_names_reaches_the_job_page_without_paths(
    project, alice, client, monkeypatch, caplog
):
    """A fault nobody foresaw (a full disk) fails the job by kind; the path stays in the log."""
    from django.core.files.base import ContentFile

    from formats.jobs import do_start_import
    from trajectories.jobs import job_tmp_dir, run_job
    from trajectories.models import Job

    def disk_full(project, source, *args, workdir, **kwargs):
        raise OSError(28, "No space left on device", str(workdir / "waypoint-import-x/a.png"))

    monkeypatch.setattr("trajectories.jobs._send", lambda pk: None)
    monkeypatch.setattr("formats.jobs.import_trajectories", disk_full)
    upload = ContentFile(b"PK\x05\x06" + b"\0" * 18, name="export.zip")
    job = do_start_import(project, upload, "waypoint", alice)
    run_job(job.pk)
    job = Job.objects.get(pk=job.pk)
    expected = f"internal error (OSError); the worker's log has the details (job {job.pk})"
    assert (job.status, job.message) == ("failed", expected)
    client.force_login(alice)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert expected.replace("'", "&#x27;") in page
    assert str(job_tmp_dir(job)) not in page and "No space left" not in page
    assert "No space left on device" in caplog.text  # the log keeps what the page leaves out


def _set(path: str, value):
    """A change of line 2 at ``path`` (``"device.model"``, ``"screens.0.package"``)."""

    def change(lines):
        *parents, last = path.split(".")
        target = lines[1]
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        target[int(last) if last.isdigit() else last] = value

    return change


@pytest.mark.parametrize(
    "path, value, message",
    [
        ("task.id", "t" * 65, "task.uid: must be at most 64 characters, got 65"),
        ("device.model", "m" * 201, "device.model: must be at most 200 characters, got 201"),
        ("device.android_version", "1" * 33, "device.android_version: must be at most 32 "
         "characters, got 33"),
        ("recorded_by", "r" * 151, "recorded_by: must be at most 150 characters, got 151"),
        ("screens.0.package", "p" * 256, "screens[0].package: must be at most 255 characters, "
         "got 256"),
        ("subgoals.0.origin", "o" * 101, "subgoals[0].origin: must be at most 100 characters, "
         "got 101"),
        ("memory_targets.0.key", "k" * 201, "memory_targets[0].key: must be at most 200 "
         "characters, got 201"),
        ("steps.0.thought", "a\x00b", "steps[0].thought: must not contain NUL characters"),
        ("metadata", {"note": "a\x00b"}, "metadata.note: must not contain NUL characters"),
    ],
)  # fmt: skip
def test_a_value_no_database_column_can_hold_is_refused_before_writing(
    project, tmp_path, path, value, message
):
    """SQLite stores them; PostgreSQL refuses them at the write, after line 1 was written."""
    do_import_trajectory(project, make_record(steps=2, seed=4))
    do_import_trajectory(project, make_record(steps=3, seed=5))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    Trajectory.objects.all().delete()
    rewrite(out, _set(path, value))
    assert refused(project, out) == f"trajectories.jsonl line 2: {message}"


def test_a_project_name_no_database_can_store_is_refused_before_copies_are_written(
    project, tmp_path
):
    """Copies record the manifest's project name; a NUL in it is named there, not at the write."""
    do_import_trajectory(project, make_record(steps=2, seed=4))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "project": "Shops\x00"}))
    before = sizes()
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, out, as_copies=True)
    assert str(caught.value) == "manifest.json.project: must not contain NUL characters"
    assert sizes() == before


LONG = "a" * 300


@pytest.mark.parametrize(
    "member",
    [f"export/screens/{LONG}.png", f"export/{LONG}/a.png", "export/" + "/".join(["d" * 200] * 30)],
    ids=["file", "folder", "path"],
)
@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_it_refuses_an_archive_member_whose_name_no_disk_can_hold(project, tmp_path, member, kind):
    """Named by the limit, not as a damaged archive with the temporary folder's path."""
    archive = tmp_path / f"long.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as out:
            out.writestr("export/manifest.json", "{}")
            out.writestr(member, "x")
    else:
        with tarfile.open(archive, "w") as out:
            info = tarfile.TarInfo(member)
            info.size = 1
            out.addfile(info, io.BytesIO(b"x"))
    message = refused(project, archive)
    assert message.startswith(f"long.{kind}: member 'export/")
    assert message.endswith(
        "has a name longer than 255 bytes"
        if "path" not in member and len(member) < 1024
        else "has a path longer than 1024 bytes"
    ), message
    assert len(message) < 200 and str(tmp_path) not in message

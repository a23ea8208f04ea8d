"""The native waypoint/1 format: round trip, idempotence, and bad input that changes nothing."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from formats.catalogue import export_trajectories, import_trajectories
from tests.trajectories.builders import make_record, png
from trajectories.models import Anchor, AnchorLink, Blob, Screen, Step, Trajectory
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture
def exported(project, tmp_path) -> Path:
    do_import_trajectory(project, make_record(steps=3, seed=1))
    do_import_trajectory(project, make_record(steps=5, seed=2))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    return out


def rewrite(folder: Path, change) -> None:
    """Edit the JSON lines and keep the manifest's checksum of the file right."""
    data = folder / "trajectories.jsonl"
    lines = [json.loads(line) for line in data.read_text().splitlines()]
    change(lines)
    text = "".join(
        (line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n"
        for line in lines
    )
    data.write_text(text)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["trajectories.jsonl"] = hashlib.sha256(text.encode()).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_it_writes_the_documented_layout(exported):
    manifest = json.loads((exported / "manifest.json").read_text())
    assert manifest["format"] == "waypoint"
    assert manifest["schema_version"] == 1
    assert manifest["counts"] == {"trajectories": 2, "steps": 8, "screens": 10, "files": 18}
    assert manifest["waypoint_version"] == "0.1.0"
    assert manifest["filter"] == {} and manifest["split"] is None
    card = (exported / "README.md").read_text()
    assert "Trajectories: 2, steps: 8, screens: 10." in card
    assert "| com.example.shop | 2 |" in card
    files = files_of(exported)
    assert set(manifest["files"]) == set(files) - {"manifest.json"}
    for name, sha in manifest["files"].items():
        assert hashlib.sha256(files[name]).hexdigest() == sha
    lines = (exported / "trajectories.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert first["schema"] == "waypoint/1"
    assert first["steps"][0]["action"] == {"type": "click", "x": 60, "y": 120}
    assert first["anchor_links"] == [
        {"source": "a1", "target": "a2", "relation": "enables", "critical": True}
    ]
    assert first["screens"][0]["screenshot"].startswith("screens/")


def test_export_import_export_is_byte_identical(project, exported, tmp_path):
    Trajectory.objects.all().delete()
    counts = import_trajectories(project, exported)
    assert counts == {"created": 2, "existing": 0, "steps": 8}
    again = tmp_path / "again"
    export_trajectories(Trajectory.objects.filter(project=project), again)
    assert files_of(again) == files_of(exported)


def test_import_keeps_every_label(project, exported):
    Trajectory.objects.all().delete()
    import_trajectories(project, exported)
    trajectory = Trajectory.objects.get(step_count=5)
    assert trajectory.outcome == "success"
    assert trajectory.metadata == {"note": "ünïcode ✓"}
    assert [s.memory for s in trajectory.steps.all()][:1] == ["price is 12.50 €"]
    assert [(g.start, g.end, g.success) for g in trajectory.subgoals.all()] == [
        (0, 0, "yes"),
        (1, 4, "uncertain"),
    ]
    link = AnchorLink.objects.get(source__trajectory=trajectory)
    assert (link.source.key, link.target.key, link.relation, link.critical) == (
        "a1",
        "a2",
        "enables",
        True,
    )
    assert trajectory.memory_targets.get().retrieve_steps == [4]


def test_importing_twice_creates_no_duplicate(project, exported):
    counts = import_trajectories(project, exported)
    assert counts == {"created": 0, "existing": 2, "steps": 0}
    assert Trajectory.objects.count() == 2
    assert Step.objects.count() == 8


def test_identical_screenshots_are_stored_once(project):
    record = make_record(steps=2, seed=3)
    for screen in record.screens:
        screen.screenshot = png(7)
    do_import_trajectory(project, record)
    assert Screen.objects.count() == 3
    assert Blob.objects.filter(content_type="image/png").count() == 1


def test_an_export_with_a_control_character_in_its_xml_imports_again(project, tmp_path):
    from lxml import etree

    from trajectories.blobs import read_blob
    from trajectories.uixml import parse_ui_xml

    record = make_record(steps=1, seed=4)
    record.screens[0].ui_xml = record.screens[0].ui_xml.replace(b"Buy 0", b"Buy\x07 0")
    do_import_trajectory(project, record)  # as an older Waypoint stored it
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    Trajectory.objects.all().delete()

    assert import_trajectories(project, out) == {"created": 1, "existing": 0, "steps": 1}
    screen = Trajectory.objects.get().steps.get().screen
    xml = read_blob(screen.ui_xml)
    etree.fromstring(xml)  # what a strict XML tool reads: no invalid character is left
    assert parse_ui_xml(xml).elements[1].text == "Buy. 0"


def test_it_imports_zip_and_tar_archives(project, exported, tmp_path):
    Trajectory.objects.all().delete()
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in exported.rglob("*"):
            out.write(path, f"export/{path.relative_to(exported)}")
    assert import_trajectories(project, archive)["created"] == 2
    Trajectory.objects.all().delete()
    tar = tmp_path / "export.tar.gz"
    with tarfile.open(tar, "w:gz") as out:
        out.add(exported, arcname=".")
    assert import_trajectories(project, tar)["created"] == 2


def assert_refused(project, source, message: str) -> None:
    before = Trajectory.objects.count()
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, source)
    assert str(caught.value) == message
    assert Trajectory.objects.count() == before


@pytest.fixture
def fresh(project, exported):
    """The export, with the database emptied so that an import would create everything."""
    Trajectory.objects.all().delete()
    return exported


def test_it_refuses_invalid_json_lines_and_imports_nothing(project, fresh):
    rewrite(fresh, lambda lines: lines.__setitem__(1, '{"schema": "waypoint/1", "id": '))
    assert_refused(
        project,
        fresh,
        "trajectories.jsonl line 2: invalid JSON at column 31: Expecting value",
    )


def test_it_refuses_an_unknown_schema_version(project, fresh):
    manifest = json.loads((fresh / "manifest.json").read_text())
    manifest["schema_version"] = 2
    (fresh / "manifest.json").write_text(json.dumps(manifest))
    assert_refused(
        project,
        fresh,
        "manifest.json.schema_version: unknown schema version 2 (this Waypoint reads version 1)",
    )


def test_it_refuses_an_unknown_line_schema(project, fresh):
    rewrite(fresh, lambda lines: lines[0].update(schema="waypoint/9"))
    assert_refused(
        project,
        fresh,
        "trajectories.jsonl line 1: schema: unknown schema 'waypoint/9' "
        "(this Waypoint reads waypoint/1)",
    )


def _first_screenshot(folder: Path) -> Path:
    line = json.loads((folder / "trajectories.jsonl").read_text().splitlines()[0])
    return folder / line["screens"][0]["screenshot"]


def test_it_refuses_a_missing_image(project, fresh):
    shot = _first_screenshot(fresh)
    shot.unlink()
    assert_refused(
        project,
        fresh,
        f"trajectories.jsonl line 1: screens[0].screenshot: file 'screens/{shot.name}' is missing",
    )


def _replace_file(folder: Path, path: Path, data: bytes) -> None:
    path.write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"][str(path.relative_to(folder))] = hashlib.sha256(data).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_it_refuses_a_truncated_image(project, fresh):
    shot = _first_screenshot(fresh)
    _replace_file(fresh, shot, shot.read_bytes()[:200])
    assert_refused(
        project,
        fresh,
        f"trajectories.jsonl line 1: screens[0].screenshot (screens/{shot.name}): "
        "the image is truncated",
    )


def test_it_refuses_an_image_that_is_not_an_image(project, fresh):
    shot = _first_screenshot(fresh)
    _replace_file(fresh, shot, b"<html>not a picture</html>")
    assert_refused(
        project,
        fresh,
        f"trajectories.jsonl line 1: screens[0].screenshot (screens/{shot.name}): "
        "not an image (expected PNG, JPEG or WebP bytes)",
    )


def test_it_refuses_a_file_whose_checksum_does_not_match(project, fresh):
    shot = _first_screenshot(fresh)
    shot.write_bytes(png(99))
    assert_refused(
        project,
        fresh,
        f"trajectories.jsonl line 1: screens[0].screenshot: file 'screens/{shot.name}' "
        "does not match its sha256 in manifest.json",
    )


def test_it_refuses_xml_that_is_not_xml(project, fresh):
    line = json.loads((fresh / "trajectories.jsonl").read_text().splitlines()[0])
    xml = fresh / line["screens"][0]["ui_xml"]
    _replace_file(fresh, xml, b"this is not xml")
    assert_refused(
        project,
        fresh,
        f"trajectories.jsonl line 1: screens[0].ui_xml ({line['screens'][0]['ui_xml']}): "
        "not XML: input starts with b'this is '",
    )


def test_it_refuses_steps_out_of_order(project, fresh):
    def swap(lines):
        steps = lines[1]["steps"]
        steps[0], steps[1] = steps[1], steps[0]

    rewrite(fresh, swap)
    assert_refused(
        project,
        fresh,
        "trajectories.jsonl line 2: steps[0].index: steps out of order: expected index 0, got 1",
    )


def test_it_refuses_overlapping_subgoals(project, fresh):
    rewrite(fresh, lambda lines: lines[1]["subgoals"][1].update(start=0))
    assert_refused(
        project,
        fresh,
        "trajectories.jsonl line 2: subgoals[1]: range [0, 4] overlaps subgoals[0] [0, 0]",
    )


def test_it_refuses_anchor_links_across_trajectories(project, fresh):
    def relink(lines):
        lines[0]["anchors"][1]["id"] = "b2"
        lines[0]["anchor_links"][0]["target"] = "b2"
        lines[1]["anchor_links"][0]["target"] = "b2"

    rewrite(fresh, relink)
    assert_refused(
        project,
        fresh,
        "trajectories.jsonl line 2: anchor_links[0].target: "
        "anchor 'b2' is not an anchor of this trajectory",
    )


def test_it_refuses_a_click_outside_the_screenshot(project, fresh):
    rewrite(fresh, lambda lines: lines[0]["steps"][0]["action"].update(x=500))
    assert_refused(
        project,
        fresh,
        "trajectories.jsonl line 1: steps[0].action: point (500, 120) lies outside "
        "the 120x240 screenshot",
    )


def test_it_refuses_an_action_with_fields_of_another_type(project, fresh):
    rewrite(fresh, lambda lines: lines[0]["steps"][0].update(action={"type": "back", "x": 1}))
    assert_refused(
        project,
        fresh,
        "trajectories.jsonl line 1: steps[0].action.x: is not a field of a back action",
    )


def test_it_refuses_a_zip_with_paths_that_escape(project, fresh, tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("export/manifest.json", "{}")
        out.writestr("../../escaped.txt", "gotcha")
    assert_refused(
        project,
        archive,
        "evil.zip: member '../../escaped.txt' would be written outside the archive folder",
    )
    assert not (tmp_path.parent / "escaped.txt").exists()


def test_it_refuses_files_over_the_size_limit(project, fresh, settings):
    settings.WAYPOINT_MAX_FILE_BYTES = 100
    shot = _first_screenshot(fresh)
    size = shot.stat().st_size
    assert_refused(
        project,
        fresh,
        f"manifest.json: {'manifest.json'}: file is {_size(fresh / 'manifest.json')}, "
        "over the limit of 100 bytes (WAYPOINT_MAX_FILE_BYTES)",
    )
    assert size > 100


def _size(path: Path) -> str:
    size = path.stat().st_size
    return f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} KiB"


def test_it_refuses_archive_members_over_the_size_limit(project, fresh, tmp_path, settings):
    archive = tmp_path / "big.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("export/trajectories.jsonl", b"\n" * 5000)
    settings.WAYPOINT_MAX_FILE_BYTES = 4096
    assert_refused(
        project,
        archive,
        "big.zip: export/trajectories.jsonl: file is 4.9 KiB, over the limit of 4.0 KiB "
        "(WAYPOINT_MAX_FILE_BYTES)",
    )


def test_export_refuses_an_existing_folder(project, exported):
    with pytest.raises(InvalidData, match="already exists; choose a new folder"):
        export_trajectories(Trajectory.objects.all(), exported)


def test_a_failed_export_leaves_no_folder(project, exported, tmp_path, monkeypatch):
    from formats import waypoint

    def broken(*rows):
        raise OSError("disk full")

    monkeypatch.setattr(waypoint, "_record", broken)
    with pytest.raises(OSError):
        export_trajectories(Trajectory.objects.all(), tmp_path / "out")
    assert [p.name for p in tmp_path.iterdir()] == ["export"]


def test_the_commands_export_and_import(project, exported, tmp_path):
    out = io.StringIO()
    call_command(
        "export_trajectories", "--project", project.pk, "--out", tmp_path / "c.zip", stdout=out
    )
    assert out.getvalue() == f"exported 2 trajectories (8 steps) to {tmp_path / 'c.zip'}\n"
    Trajectory.objects.all().delete()
    out = io.StringIO()
    call_command("import_trajectories", tmp_path / "c.zip", "--project", project.pk, stdout=out)
    assert out.getvalue() == "imported 2 trajectories (8 steps); 0 were already present\n"
    assert Anchor.objects.count() == 4


def test_the_import_command_names_the_error(project, fresh):
    rewrite(fresh, lambda lines: lines[0]["task"].pop("goal"))
    with pytest.raises(CommandError) as caught:
        call_command("import_trajectories", fresh, "--project", project.pk)
    assert str(caught.value) == (
        "import failed, nothing was imported: trajectories.jsonl line 1: task.goal: is required"
    )


def test_it_refuses_fields_of_the_wrong_kind(project, fresh):
    rewrite(fresh, lambda lines: lines[1]["device"].update(width="wide"))
    assert_refused(
        project, fresh, "trajectories.jsonl line 2: device.width: must be an integer, got str"
    )


def test_it_refuses_a_subgoal_text_that_is_not_text(project, fresh):
    rewrite(fresh, lambda lines: lines[0]["subgoals"][0].update(text=["Open", "the", "item"]))
    assert_refused(
        project, fresh, "trajectories.jsonl line 1: subgoals[0].text: must be a string, got list"
    )


def test_times_are_written_in_utc_as_isoformat_writes_them(project, tmp_path):
    """Whole seconds without a fraction, six digits otherwise, a time of another zone in UTC,
    a missing time as null: the same text whatever the database."""
    from datetime import UTC, datetime, timedelta, timezone

    do_import_trajectory(project, make_record(steps=3, seed=1))
    trajectory = Trajectory.objects.get(project=project)
    screens = list(Screen.objects.filter(trajectory=trajectory).order_by("id"))
    whole = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    fraction = datetime(2026, 12, 3, 16, 30, 4, 120000, tzinfo=UTC)
    elsewhere = datetime(2026, 6, 30, 23, 59, 59, 7, tzinfo=timezone(timedelta(hours=2)))
    Screen.objects.filter(pk=screens[0].pk).update(captured_at=whole)
    Screen.objects.filter(pk=screens[1].pk).update(captured_at=fraction)
    Step.objects.filter(trajectory=trajectory, index=0).update(
        action_sent_at=elsewhere, settled_at=None
    )
    out = tmp_path / "times"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    record = json.loads((out / "trajectories.jsonl").read_text())
    assert record["screens"][0]["captured_at"] == "2026-01-02T03:04:05+00:00"
    assert record["screens"][1]["captured_at"] == "2026-12-03T16:30:04.120000+00:00"
    assert record["steps"][0]["action_sent_at"] == "2026-06-30T21:59:59.000007+00:00"
    assert record["steps"][0]["settled_at"] is None

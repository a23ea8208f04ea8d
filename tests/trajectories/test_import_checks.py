"""A refused import writes nothing: every check, ids included, runs before the first write."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from trajectories.formats import export_trajectories, import_trajectories
from trajectories.models import Anchor, Blob, Screen, Step, Subgoal, Trajectory
from trajectories.services import do_create_project, do_import_trajectory
from trajectories.validation import InvalidData

from .builders import make_record
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

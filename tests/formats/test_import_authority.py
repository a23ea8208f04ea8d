"""Imported status and authorship: nobody imports a state their role could not reach."""

from __future__ import annotations

import io

import pytest
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command

from formats.catalogue import export_trajectories, import_trajectories
from formats.jobs import do_start_import
from tests.trajectories.builders import make_record
from trajectories.jobs import run_job
from trajectories.models import Job, Trajectory
from trajectories.services import do_import_trajectory, do_set_membership
from trajectories.validation import InvalidData

from .test_import_as_copies import zip_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def export_of(project, tmp_path):
    """An export of one trajectory with the given fields, the database emptied again."""

    def make(**fields):
        do_import_trajectory(project, make_record(steps=2, seed=9, **fields))
        out = tmp_path / f"export-{len(list(tmp_path.iterdir()))}"
        export_trajectories(Trajectory.objects.filter(project=project), out)
        Trajectory.objects.all().delete()
        return out

    return make


def refused(project, source, actor) -> str:
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, source, actor=actor)
    assert not Trajectory.objects.exists()
    return str(caught.value)


@pytest.mark.parametrize("status", ["approved", "rejected"])
def test_an_annotator_cannot_import_a_reviewed_trajectory(project, bob, export_of, status):
    source = export_of(status=status, recorded_by="bob")
    assert refused(project, source, bob) == (
        "trajectories.jsonl line 1: status: only reviewers and admins of the project may import "
        f"a trajectory with status '{status}' (you are an annotator)"
    )


def test_an_annotator_cannot_credit_another_user(project, bob, export_of):
    source = export_of(recorded_by="alice")
    assert refused(project, source, bob) == (
        "trajectories.jsonl line 1: recorded_by: 'alice' is another user of this instance; "
        "only admins of the project may import a trajectory recorded by someone else "
        "(you are an annotator)"
    )


def test_an_annotator_imports_their_own_work_for_review(project, bob, export_of):
    source = export_of(status="in_review", recorded_by="bob")
    assert import_trajectories(project, source, actor=bob)["created"] == 1
    trajectory = Trajectory.objects.get()
    assert (trajectory.status, trajectory.recorded_by) == ("in_review", bob)


def test_a_recorder_from_elsewhere_is_kept_by_name(project, bob, export_of):
    source = export_of(recorded_by="someone-at-another-lab")
    import_trajectories(project, source, actor=bob)
    trajectory = Trajectory.objects.get()
    assert (trajectory.recorder_name, trajectory.recorded_by) == ("someone-at-another-lab", None)


def test_a_reviewer_imports_approved_work_but_credits_nobody_else(project, alice, bob, export_of):
    do_set_membership(project, bob, "reviewer", alice)
    approved = export_of(status="approved", recorded_by="bob")
    assert import_trajectories(project, approved, actor=bob)["created"] == 1
    Trajectory.objects.all().delete()
    by_alice = export_of(status="approved", recorded_by="alice")
    assert "only admins of the project may import" in refused(project, by_alice, bob)


def test_an_admin_imports_any_status_and_recorder(project, alice, export_of):
    source = export_of(status="approved", recorded_by="bob")
    import_trajectories(project, source, actor=alice)
    assert Trajectory.objects.get().status == "approved"


def test_the_job_of_an_annotator_is_refused(project, bob, export_of):
    source = export_of(status="approved", recorded_by="bob")
    job = do_start_import(project, ContentFile(zip_of(source), name="a.zip"), "auto", bob)
    run_job(job.pk)
    job = Job.objects.get(pk=job.pk)
    assert job.status == "failed"
    assert job.message.startswith("trajectories.jsonl line 1: status: only reviewers and admins")
    assert not Trajectory.objects.exists()


def test_the_command_checks_the_user_it_imports_as(project, export_of):
    source = export_of(status="approved", recorded_by="alice")
    with pytest.raises(CommandError, match="status: only reviewers and admins"):
        call_command("import_trajectories", source, "--project", project.pk, "--user", "bob")
    out = io.StringIO()
    call_command("import_trajectories", source, "--project", project.pk, stdout=out)
    assert Trajectory.objects.get().status == "approved"

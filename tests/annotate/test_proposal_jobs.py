"""Asking for proposals on a trajectory, a selection or a project: a job, its API and command."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from annotate.models import Proposal
from annotate.services.proposals import do_start_proposals, run_dispatched_proposal
from tests.annotate.conftest import blank_record
from tests.annotate.test_proposals import PAYLOAD
from tests.conftest import wait_for_job
from tests.trajectories.builders import make_record
from trajectories.jobs import reap_stale_jobs, run_job
from trajectories.models import AuditEvent, Job
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData


@pytest.fixture
def two(project):
    return [do_import_trajectory(project, make_record(steps=4, seed=s))[0] for s in (1, 2)]


@pytest.mark.django_db
def test_a_selection_gets_one_proposal_each_and_asking_again_adds_none(
    project, alice, two, django_capture_on_commit_callbacks, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # each trajectory's task runs here
    with django_capture_on_commit_callbacks(execute=False):
        job = do_start_proposals(project, alice, {"trajectories": [str(two[0].uid)]})
    run_job(job.pk)
    job.refresh_from_db()
    assert (job.kind, job.format, job.status, job.counts) == (
        "propose",
        "heuristic",
        "succeeded",
        {"proposed": 1},
    )
    assert (job.done, job.total) == (1, 1)
    with django_capture_on_commit_callbacks(execute=False):
        again = do_start_proposals(project, alice)  # the whole project
    run_job(again.pk)
    again.refresh_from_db()
    assert again.counts == {"proposed": 1, "already proposed": 1}
    assert Proposal.objects.filter(trajectory__in=two).count() == 2
    kinds = AuditEvent.objects.filter(project=project).values_list("kind", flat=True)
    assert list(kinds).count("job.proposals_queued") == 2
    client = Client()
    client.force_login(alice)
    page = client.get(f"/jobs/{again.pk}/").content.decode()
    assert "Proposals #" in page and "already proposed: 1" in page
    assert 'href="/review/">Review the proposals waiting' in page


@pytest.mark.django_db
def test_it_refuses_an_empty_selection_and_an_unknown_proposer(project, alice, two):
    with pytest.raises(InvalidData, match="no trajectory of this project matches"):
        do_start_proposals(project, alice, {"status": "approved"})
    with pytest.raises(InvalidData, match="unknown proposer 'gpt'"):
        do_start_proposals(project, alice, {}, "gpt")


@pytest.mark.django_db
def test_the_api_asks_for_one_trajectory_or_a_project(client, project, alice, bob, charlie, two):
    url = f"/api/v1/trajectories/{two[0].pk}/proposals/"
    client.force_login(charlie)
    assert client.post(url, {}, content_type="application/json").status_code == 404
    client.force_login(bob)  # a member, but not assigned nor the recorder
    assert client.post(url, {}, content_type="application/json").status_code == 403
    project_url = f"/api/v1/projects/{project.pk}/proposals/"
    assert client.post(project_url, {}, content_type="application/json").status_code == 403
    client.force_login(alice)
    answer = client.post(url, {"proposer": "heuristic"}, content_type="application/json")
    assert answer.status_code == 202, answer.content
    assert Job.objects.get(pk=answer.json()["id"]).params["trajectories"] == [two[0].pk]
    answer = client.post(project_url, {"proposer": "x"}, content_type="application/json")
    assert answer.status_code == 400 and "proposer" in answer.json()["detail"]
    answer = client.post(project_url, {}, content_type="application/json")
    assert answer.status_code == 202 and answer.json()["total"] == 2


@pytest.mark.django_db
def test_the_command_runs_the_job_here_or_names_what_is_wrong(project, two, capsys):
    call_command("propose", "--project", str(project.pk), "--now")
    assert "succeeded: 2 proposed" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no project with id 999"):
        call_command("propose", "--project", "999")
    with pytest.raises(CommandError, match="filters.trajectories: 'x' is not a trajectory id"):
        call_command("propose", "--project", str(project.pk), "--trajectory", "x")


@pytest.mark.usefixtures("celery_worker")
@pytest.mark.django_db(transaction=True)
def test_the_worker_makes_the_proposals(project, alice, two):
    job = wait_for_job(do_start_proposals(project, alice).pk)
    assert job.status == "succeeded", job.message
    assert job.counts == {"proposed": 2}
    assert Proposal.objects.filter(trajectory__project=project, status="pending").count() == 2


@pytest.mark.django_db
def test_the_api_lists_accepts_and_rejects_proposals(client, project, alice, charlie):
    t, _ = do_import_trajectory(project, blank_record())  # six steps, no labels
    proposal = Proposal.objects.create(
        trajectory=t, proposer="heuristic", prompt_version="h1", payload=PAYLOAD
    )
    url = f"/api/v1/trajectories/{t.pk}/proposals/"
    client.force_login(charlie)
    assert client.get(url).status_code == 404
    answer = client.post(f"{url}{proposal.pk}/accept/", {}, content_type="application/json")
    assert answer.status_code == 404
    client.force_login(alice)
    (listed,) = client.get(url).json()
    assert (listed["id"], listed["status"], listed["proposer"]) == (
        proposal.pk,
        "pending",
        "heuristic",
    )
    accept = f"{url}{proposal.pk}/accept/"
    answer = client.post(accept, {"items": ["subgoals:0"]}, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json()["detail"] == "version: send the version of the labels you accept into"
    body = {"version": t.version, "items": ["subgoals:0"], "edited": {"text": "Open it"}}
    answer = client.post(accept, body, content_type="application/json")
    assert answer.status_code == 200, answer.content
    labels = answer.json()
    assert labels["version"] == t.version + 1
    assert [g["text"] for g in labels["subgoals"]][0] == "Open it"
    stale = client.post(
        accept, {"version": t.version, "items": "all"}, content_type="application/json"
    )
    assert stale.status_code == 409
    answer = client.post(
        f"{url}{proposal.pk}/reject/", {"items": "all"}, content_type="application/json"
    )
    assert answer.status_code == 200
    assert client.get(url).json()[0]["status"] == "edited"
    answer = client.post(f"{url}999/reject/", {}, content_type="application/json")
    assert answer.status_code == 404


@pytest.fixture
def sent(monkeypatch):
    """The per-trajectory tasks a job sends, kept instead of queued."""
    from annotate.services import proposals

    messages = []
    monkeypatch.setattr(proposals, "_send_proposal", lambda p, j: messages.append((p, j)))
    return messages


@pytest.mark.django_db
def test_one_task_per_trajectory_and_the_last_one_ends_the_job(
    project, alice, two, sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        job = do_start_proposals(project, alice)
    run_job(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.total, len(sent)) == ("running", 0, 2, 2)
    first, second = sent
    assert run_dispatched_proposal(*first)
    assert not run_dispatched_proposal(*first)  # delivered twice: proposed once
    job.refresh_from_db()
    assert (job.status, job.done) == ("running", 1)
    assert run_dispatched_proposal(*second)
    job.refresh_from_db()
    assert (job.status, job.done, job.counts) == ("succeeded", 2, {"proposed": 2})


@pytest.mark.django_db
def test_a_job_whose_tasks_vanished_is_requeued_and_hands_out_only_what_is_left(
    project, alice, two, sent, settings, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        job = do_start_proposals(project, alice)
    run_job(job.pk)
    run_dispatched_proposal(*sent[0])
    Proposal.objects.filter(pk=sent[1][0]).update(  # claimed by a worker that died
        claimed_at=timezone.now() - timedelta(seconds=settings.WAYPOINT_JOB_STALE_S + 5)
    )
    Job.objects.filter(pk=job.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.WAYPOINT_JOB_STALE_S + 5)
    )
    with django_capture_on_commit_callbacks(execute=False):
        assert reap_stale_jobs()["requeued"] == 1
    sent.clear()
    run_job(job.pk)
    assert len(sent) == 1  # the one still to propose
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == ("running", 1, 2)
    assert run_dispatched_proposal(*sent[0])  # its stale claim is taken over
    job.refresh_from_db()
    assert (job.status, job.counts) == ("succeeded", {"already proposed": 1, "proposed": 1})


@pytest.mark.django_db(transaction=True)
def test_a_slow_proposer_keeps_its_job_and_claim_fresh(
    project, alice, two, sent, settings, monkeypatch
):
    import time as clock

    from annotate.proposers.heuristic import HeuristicProposer

    settings.WAYPOINT_JOB_HEARTBEAT_S = 0.05
    propose = HeuristicProposer.propose
    monkeypatch.setattr(
        HeuristicProposer, "propose", lambda self, ep: (clock.sleep(0.5), propose(self, ep))[1]
    )
    job = do_start_proposals(project, alice, {"trajectories": [str(two[0].uid)]})
    run_job(job.pk)
    job.refresh_from_db()
    beat_before = job.heartbeat_at
    (message,) = sent
    claimed_before = timezone.now()
    assert run_dispatched_proposal(*message)
    job.refresh_from_db()
    assert job.status == "succeeded" and job.heartbeat_at > beat_before
    # touched while the proposer worked, not only when it was claimed
    assert Proposal.objects.get(pk=message[0]).claimed_at - claimed_before >= timedelta(seconds=0.3)


def test_the_schema_says_what_each_proposal_request_reads():
    """One trajectory takes a proposer only (filters there were ignored, so not documented);
    accepting names the labels' version."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]

    def body(path: str) -> dict:
        ref = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        return components[ref["schema"]["$ref"].rsplit("/", 1)[1]]

    one = body("/api/v1/trajectories/{trajectory_id}/proposals/")
    assert set(one["properties"]) == {"proposer"}
    many = body("/api/v1/projects/{project_id}/proposals/")
    assert set(many["properties"]) == {"proposer", "filters"}
    accept = body("/api/v1/trajectories/{trajectory_id}/proposals/{proposal_id}/accept/")
    assert accept["required"] == ["version"]
    reject = body("/api/v1/trajectories/{trajectory_id}/proposals/{proposal_id}/reject/")
    assert "required" not in reject
    path = "/api/v1/trajectories/{trajectory_id}/proposals/{proposal_id}/accept/"
    answer = schema["paths"][path]["post"]["responses"]["200"]["content"]["application/json"]
    accepted = components[answer["schema"]["$ref"].rsplit("/", 1)[1]]
    assert {"accepted", "skipped", "subgoals", "version"} <= set(accepted["properties"])


@pytest.mark.django_db
def test_the_api_accepts_all_it_can_and_lists_what_it_skipped(client, project, alice):
    from trajectories.labels import edits

    t, _ = do_import_trajectory(project, blank_record())
    proposal = Proposal.objects.create(
        trajectory=t, proposer="heuristic", prompt_version="h1", payload=PAYLOAD
    )
    edits.do_split_subgoal(t, alice, t.version, 4)  # subgoals 0–3 and 4–5
    client.force_login(alice)
    accept = f"/api/v1/trajectories/{t.pk}/proposals/{proposal.pk}/accept/"
    answer = client.post(
        accept, {"version": t.version, "items": "all"}, content_type="application/json"
    )
    assert answer.status_code == 200, answer.content
    told = answer.json()
    assert told["accepted"] == ["memory_targets:0", "anchors:0", "anchors:1"]
    assert told["skipped"] == [
        {
            "item": "subgoals:0",
            "name": "subgoal 0–2 “Open the shop”",
            "reason": "the proposed subgoal 0–2 overlaps the accepted subgoal 0–3: "
            "move or delete that one first",
        },
        {
            "item": "subgoals:1",
            "name": "subgoal 3–5 “Buy”",
            "reason": "the proposed subgoal 3–5 overlaps the accepted subgoal 0–3: "
            "move or delete that one first",
        },
    ]
    assert len(told["anchors"]) == 2 and told["version"] == t.version + 2
    again = client.post(
        accept, {"version": told["version"], "items": "all"}, content_type="application/json"
    )
    assert again.status_code == 422  # against the stored labels, as any refused edit
    assert again.json()["detail"].startswith("items: none of the proposed items can be accepted")

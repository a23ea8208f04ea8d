"""The proposals page: acceptance figures per proposer, and asking for proposals (admins)."""

from __future__ import annotations

import pytest

from annotate.models import Proposal
from annotate.proposal_figures import proposal_figures
from annotate.services.proposals import do_accept, do_reject
from tests.annotate.test_pages import client_of
from tests.annotate.test_proposals import PAYLOAD
from trajectories.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def decided(blank, bob):
    proposal = Proposal.objects.create(
        trajectory=blank, proposer="heuristic", prompt_version="h1", payload=PAYLOAD
    )
    do_accept(proposal, bob, blank.version, "subgoals:0")
    blank.refresh_from_db()
    do_accept(proposal, bob, blank.version, "subgoals:1", {"text": "Pay"})
    do_reject(proposal, bob, "all")
    Proposal.objects.create(
        trajectory=blank, proposer="llm", prompt_version="llm1", status="failed", error="x"
    )
    return proposal


def test_figures_count_decisions_and_score_boundaries_against_what_was_kept(decided):
    heuristic, llm = proposal_figures(decided.trajectory.project)
    assert (heuristic.proposer, heuristic.proposals, heuristic.failed) == ("heuristic", 1, 0)
    assert heuristic.items == {"accepted": 1, "edited": 1, "rejected": 3, "pending": 0}
    assert heuristic.boundaries.f1 == 1.0  # both proposed subgoals kept as they were
    assert (llm.proposer, llm.failed, llm.decided_trajectories) == ("llm", 1, 0)


def test_the_page_shows_figures_to_members_and_the_ask_form_to_admins(
    decided, project, alice, bob, charlie, django_capture_on_commit_callbacks
):
    url = f"/projects/{project.pk}/proposals/"
    assert client_of(charlie).get(url).status_code == 404
    page = client_of(bob).get(url).content.decode()
    assert 'id="proposal-figures"' in page and 'id="propose-form"' not in page
    assert "<td>heuristic <span" in page and "1.000" in page
    assert client_of(bob).post(url, {"proposer": "heuristic"}).status_code == 403
    page = client_of(alice).get(url).content.decode()
    assert 'id="propose-form"' in page
    with django_capture_on_commit_callbacks(execute=False):
        answer = client_of(alice).post(url, {"proposer": "heuristic", "trajectories": ""})
    assert answer.status_code == 200 and 'id="propose-queued"' in answer.content.decode()
    assert Job.objects.get(kind="propose").total == 1
    answer = client_of(alice).post(url, {"proposer": "heuristic", "trajectories": "nope"})
    assert answer.status_code == 400
    assert (
        "filters.trajectories: &#x27;nope&#x27; is not a trajectory id" in answer.content.decode()
    )


def test_the_review_queue_lists_proposals_waiting(blank, bob):
    Proposal.objects.create(
        trajectory=blank, proposer="heuristic", prompt_version="h1", payload=PAYLOAD
    )
    page = client_of(bob).get("/review/").content.decode()
    waiting = page.split('id="proposals-waiting"')[1].split("</table>")[0]
    assert "Review proposal" in waiting and "heuristic" in waiting

"""Proposals in the annotation workspace: asked for, shown apart, accepted, edited, rejected."""

from __future__ import annotations

from html import unescape

import pytest

from annotate.models import Proposal, ProposalStatus
from tests.annotate.test_pages import client_of, edit
from tests.annotate.test_proposals import PAYLOAD
from trajectories.labels.parts import all_labels
from trajectories.models import Job, Status, Trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def proposal(blank):
    return Proposal.objects.create(
        trajectory=blank, proposer="heuristic", prompt_version="h1", payload=PAYLOAD
    )


def test_an_editor_asks_for_proposals_from_the_workspace(
    blank, bob, charlie, django_capture_on_commit_callbacks
):
    page = client_of(bob).get(f"/trajectories/{blank.pk}/workspace/").content.decode()
    assert 'id="pr-ask"' in page and 'id="ws-proposed"' in page
    assert 'class="ws-track proposed"' not in page  # nothing proposed yet
    with django_capture_on_commit_callbacks(execute=False):
        answer = edit(client_of(bob), blank, "propose", version=blank.version)
    assert answer.status_code == 200
    job = Job.objects.get(kind="propose")
    assert job.params["trajectories"] == [blank.pk] and job.created_by == bob
    assert "Proposals by heuristic were asked for" in answer.content.decode()
    assert edit(client_of(charlie), blank, "propose", version=blank.version).status_code == 404


def test_proposals_show_as_their_own_track_with_the_items_on_this_step_first(proposal, blank, bob):
    page = client_of(bob).get(f"/trajectories/{blank.pk}/workspace/?step=4").content.decode()
    assert 'class="ws-track proposed"' in page and "Proposed by <b>heuristic</b>" in page
    items = page.split('class="proposal-items"')[1]
    assert items.index("pr-subgoals-1") < items.index("pr-subgoals-0")  # 3–5 covers step 4
    assert 'class="pr-accept here" id="pr-accept-subgoals-1"' in page
    assert "5 proposed items to decide" in page


def test_accept_edit_and_reject_from_the_workspace(proposal, blank, bob):
    client = client_of(bob)
    answer = edit(
        client,
        blank,
        "proposal_accept",
        version=blank.version,
        proposal=proposal.pk,
        items="subgoals:0",
        text="Open ShopMate",
    )
    assert answer.status_code == 200
    assert f'data-version="{blank.version + 1}"' in answer.content.decode()  # the new version
    (g,) = all_labels(blank)["subgoals"]
    assert (g["text"], g["origin"]) == ("Open ShopMate", "proposal:heuristic:h1")
    blank.refresh_from_db()
    edit(
        client,
        blank,
        "proposal_accept",
        version=blank.version,
        proposal=proposal.pk,
        items="memory_targets:0",
    )
    assert all_labels(blank)["memory_targets"][0]["value"] == "$4.20"  # unchanged: accepted
    answer = edit(
        client, blank, "proposal_reject", version=blank.version, proposal=proposal.pk, items="all"
    )
    assert 'class="ws-track proposed"' not in answer.content.decode()
    assert "was accepted and edited by bob" in answer.content.decode()
    assert 'id="pr-ask"' not in answer.content.decode()  # asking again would change nothing
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.EDITED
    assert proposal.decisions == {
        "subgoals": {"0": "edited", "1": "rejected"},
        "memory_targets": {"0": "accepted"},
        "anchors": {"0": "rejected", "1": "rejected"},
    }


def test_a_proposal_of_another_trajectory_is_refused(proposal, project, bob, alice):
    from annotate.services import do_assign
    from tests.annotate.conftest import blank_record
    from trajectories.services import do_import_trajectory

    other, _ = do_import_trajectory(project, blank_record(seed=9))
    do_assign(other, bob, alice)
    answer = edit(
        client_of(bob),
        other,
        "proposal_accept",
        version=other.version,
        proposal=proposal.pk,
        items="all",
    )
    assert answer.status_code == 400
    assert f"proposal '{proposal.pk}' is not a proposal of this trajectory" in unescape(
        answer.content.decode()
    )


def test_a_finished_trajectory_without_proposals_says_so_instead_of_an_empty_panel(blank, alice):
    Trajectory.objects.filter(pk=blank.pk).update(status=Status.APPROVED)
    page = client_of(alice).get(f"/trajectories/{blank.pk}/workspace/").content.decode()
    assert 'id="pr-ask"' not in page
    assert "No proposals for this trajectory; they can be asked for while it is being" in page


def test_an_anchor_is_accepted_from_the_workspace_as_it_is_or_edited(proposal, blank, bob):
    client = client_of(bob)
    # as the page posts it: the step it is on, and the item's field as shown
    answer = edit(
        client,
        blank,
        "proposal_accept",
        version=blank.version,
        step="1",
        proposal=proposal.pk,
        items="anchors:0",
        content="price: $4.20",
    )
    assert answer.status_code == 200, answer.content.decode()
    blank.refresh_from_db()
    answer = edit(
        client,
        blank,
        "proposal_accept",
        version=blank.version,
        step="5",
        proposal=proposal.pk,
        items="anchors:1",
        content="Paid and finished",
    )
    assert answer.status_code == 200, answer.content.decode()
    anchors = all_labels(blank)["anchors"]
    assert [(a["step"], a["content"]) for a in anchors] == [
        (1, "price: $4.20"),
        (5, "Paid and finished"),
    ]
    proposal.refresh_from_db()
    assert proposal.decisions == {"anchors": {"0": "accepted", "1": "edited"}}


def test_accept_all_in_the_workspace_says_what_it_skipped_and_why(proposal, blank, bob):
    client = client_of(bob)
    edit(client, blank, "split", version=blank.version, at=3)  # subgoals 0–2 and 3–5
    blank.refresh_from_db()
    answer = edit(
        client,
        blank,
        "proposal_accept",
        version=blank.version,
        step="0",
        proposal=proposal.pk,
        items="all",
    )
    assert answer.status_code == 200
    page = answer.content.decode()
    notice = page.split('id="pr-skipped"')[1].split("</div>")[0]
    assert "Accepted 3 proposed items; 2 could not be and are still proposed:" in notice
    assert (
        "<li><b>subgoal 0–2 “Open the shop”</b>: the proposed subgoal 0–2 overlaps the "
        "accepted subgoal 0–2: move or delete that one first</li>"
    ) in notice
    assert 'id="ws-flash" hx-swap-oob="innerHTML"' in page  # shown where messages are
    assert 'id="pr-subgoals-0"' in page and 'id="pr-subgoals-1"' in page  # still proposed
    assert 'id="pr-anchors-0"' not in page
    assert len(all_labels(blank)["anchors"]) == 2


def test_the_panel_polls_while_a_proposal_is_made_and_stops_once_it_is_there(
    blank, bob, charlie, django_assert_num_queries
):
    asked = Proposal.objects.create(trajectory=blank, proposer="heuristic", prompt_version="h1")
    poll = f"/trajectories/{blank.pk}/workspace/proposals/?step=4"
    polling = (
        f'hx-get="{poll}" hx-trigger="every 1s [document.visibilityState === &#x27;visible&#x27;]"'
    )
    client = client_of(bob)
    page = client.get(f"/trajectories/{blank.pk}/workspace/?step=4").content.decode()
    assert polling.replace("&#x27;", "'") in page
    assert "Proposals by heuristic were asked for; they appear here when the job has" in page
    # session, user, the trajectory with its facts (may bob edit?), proposals
    with django_assert_num_queries(4):
        waiting = client.get(poll, HTTP_HX_REQUEST="true").content.decode()
    assert polling.replace("&#x27;", "'") in waiting and 'id="pr-waiting"' in waiting
    Proposal.objects.filter(pk=asked.pk).update(payload=PAYLOAD)
    done = client.get(poll, HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in done.split('id="ws-proposed"')[0]  # the panel stops polling
    assert 'id="pr-subgoals-1"' in done and "5 proposed items to decide" in done
    assert 'id="ws-proposed" class="ws-proposed" hx-swap-oob="true"' in done
    assert done.count('class="cell current"') == 1  # the proposed track, on step 4
    assert client_of(charlie).get(poll).status_code == 404


def test_the_first_proposal_on_the_step_is_marked_for_y_and_x(proposal, blank, bob):
    page = client_of(bob).get(f"/trajectories/{blank.pk}/workspace/?step=1").content.decode()
    # subgoal 0–2, the memory target encoded at 1 and the anchor at 1 are on step 1
    assert page.count("proposal-item here") == 3
    assert page.count('here marked"') == 1
    assert 'class="proposal-item here marked" id="pr-subgoals-0" data-item="subgoals:0"' in page
    assert "<dt>o</dt><dd>mark the next proposal of this step" in page

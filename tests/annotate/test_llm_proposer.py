"""The LLM proposer against a local OpenAI-compatible server started by the test: good,
malformed and hostile answers, slow answers, 429s and 500s, and the in-flight limit."""

from __future__ import annotations

import json
import threading

import pytest

from annotate.models import ProposalStatus
from annotate.proposers import episode_of_record, get_proposer
from annotate.services.proposals import do_request_proposal, run_proposal
from tests.trajectories.builders import make_record
from trajectories.labels.parts import all_labels
from trajectories.validation import InvalidData

SEGMENTS = {"subgoals": [{"start": 0, "end": 1}, {"start": 2, "end": 3}]}
ANNOTATION = {
    "subgoals": [
        {
            "start": 0,
            "end": 1,
            "text": "Open the shop",
            "effect": "The shop shows",
            "behaviour": "click",
            "success": "yes",
        },
        {
            "start": 2,
            "end": 3,
            "text": "Buy",
            "effect": "Bought",
            "behaviour": "click",
            "success": "uncertain",
        },
    ],
    "anchors": [{"step": 3, "type": "finish", "content": "Bought"}],
}


def episode():
    return episode_of_record(make_record(steps=4, seed=5))


def test_a_good_answer_becomes_a_payload_with_its_tokens(llm):
    server = llm([(200, SEGMENTS, 0), (200, "```json\n" + json.dumps(ANNOTATION) + "\n```", 0)])
    answer = get_proposer("llm").propose(episode())
    assert answer.error == ""
    assert [g["text"] for g in answer.payload["subgoals"]] == ["Open the shop", "Buy"]
    assert answer.payload["anchors"][0]["type"] == "finish"
    assert (answer.prompt_tokens, answer.completion_tokens, answer.model) == (200, 40, "test-vl")
    segment, annotate = (r["body"] for r in server.requests)
    assert "0. [com.example.shop] click" in segment["messages"][0]["content"][0]["text"]
    images = [c for c in annotate["messages"][0]["content"] if c["type"] == "image_url"]
    assert images == []  # a record has no images here; stored trajectories send them
    assert server.requests[0]["auth"] == "Bearer sk-test"


@pytest.mark.parametrize(
    "bad, message",
    [
        ("Sure! Here are the subgoals.", "answer: not JSON"),
        ({"subgoals": [{"start": 0, "end": 2}, {"start": 2, "end": 3}]}, "overlap the previous"),
        ({"subgoals": [{"start": 0, "end": 9}]}, "steps 0–9 are not inside 0–3"),
        ({"subgoals": [{"start": "0; DROP TABLE", "end": 1}]}, "must be a step index"),
    ],
)
def test_an_invalid_segmentation_is_retried_then_fails_with_the_raw_text(
    llm, settings, bad, message
):
    settings.LLM_INVALID_RETRIES = 1
    server = llm([(200, bad, 0), (200, bad, 0)])
    answer = get_proposer("llm").propose(episode())
    assert answer.payload == {} and message in answer.error
    assert answer.error.startswith("no valid answer after 2 tries")
    assert len(server.requests) == 2
    assert (bad if isinstance(bad, str) else json.dumps(bad)) in answer.raw_output


def test_a_bad_answer_then_a_good_one_is_fine(llm):
    hostile = dict(
        ANNOTATION,
        subgoals=[dict(ANNOTATION["subgoals"][0], success="maybe"), ANNOTATION["subgoals"][1]],
    )
    llm([(200, SEGMENTS, 0), (200, hostile, 0), (200, ANNOTATION, 0)])
    answer = get_proposer("llm").propose(episode())
    assert answer.error == "" and answer.payload["subgoals"][0]["success"] == "yes"
    assert "maybe" in answer.raw_output  # every answer is kept


def test_hostile_annotations_are_refused(llm, settings):
    settings.LLM_INVALID_RETRIES = 0
    huge = dict(
        ANNOTATION,
        subgoals=[dict(ANNOTATION["subgoals"][0], text="x" * 5000), ANNOTATION["subgoals"][1]],
    )
    llm([(200, SEGMENTS, 0), (200, huge, 0)])
    assert "subgoals[0].text: over 2000 characters" in get_proposer("llm").propose(episode()).error
    other = dict(ANNOTATION, anchors=[{"step": 1, "type": "rootkit", "content": "x"}])
    llm([(200, SEGMENTS, 0), (200, other, 0)])
    assert "unknown anchor type 'rootkit'" in get_proposer("llm").propose(episode()).error
    moved = dict(
        ANNOTATION,
        subgoals=[dict(ANNOTATION["subgoals"][0], end=0), dict(ANNOTATION["subgoals"][1], start=1)],
    )
    llm([(200, SEGMENTS, 0), (200, moved, 0)])
    assert "not the segments" in get_proposer("llm").propose(episode()).error


def test_429_and_500_are_retried_with_backoff(llm):
    server = llm(
        [(429, None, 0), (500, None, 0), (200, SEGMENTS, 0), (503, None, 0), (200, ANNOTATION, 0)]
    )
    answer = get_proposer("llm").propose(episode())
    assert answer.error == "" and len(server.requests) == 5


def test_an_endpoint_that_keeps_failing_or_is_too_slow_fails_the_proposal(llm, settings):
    settings.LLM_HTTP_RETRIES = 2
    llm(lambda body: (500, None, 0))
    assert get_proposer("llm").propose(episode()).error == (
        f"gave up after 3 requests: HTTP 500 Internal Server Error from {settings.LLM_BASE_URL}"
        "/chat/completions"
    )
    settings.LLM_HTTP_RETRIES = 0
    llm(lambda body: (200, SEGMENTS, 3))  # the timeout is 2 s
    error = get_proposer("llm").propose(episode()).error
    assert error.startswith("gave up after 1 requests: no answer from") and "timed out" in error


def test_it_never_has_more_requests_in_flight_than_allowed(llm, settings):
    settings.LLM_MAX_IN_FLIGHT = 2
    server = llm(lambda body: (200, SEGMENTS if "segment" in json.dumps(body) else ANNOTATION, 0.2))
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(get_proposer("llm").propose(episode())))
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.error for r in results] == [""] * 6
    print(f"most requests in flight: {server.most_in_flight} (limit 2)")
    assert server.most_in_flight == 2


def test_without_an_endpoint_asking_says_what_to_set(settings):
    settings.LLM_BASE_URL = ""
    with pytest.raises(InvalidData, match="the llm proposer needs LLM_BASE_URL"):
        get_proposer("llm")


@pytest.mark.django_db
def test_a_failed_llm_proposal_keeps_the_raw_answer_and_writes_no_labels(llm, settings, blank, bob):
    settings.LLM_INVALID_RETRIES = 0
    llm([(200, "<script>alert(1)</script> not json", 0)])
    proposal, _ = do_request_proposal(blank, bob, "llm")
    run_proposal(proposal)
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.FAILED and proposal.model == "test-vl"
    assert proposal.raw_output == "<script>alert(1)</script> not json"
    assert proposal.error.startswith("no valid answer after 1 tries: answer: not JSON")
    assert all_labels(blank)["subgoals"] == []


@pytest.mark.django_db
def test_a_stored_trajectory_is_proposed_with_its_boundary_screenshots(llm, settings, project, bob):
    from trajectories.services import do_import_trajectory

    trajectory, _ = do_import_trajectory(project, make_record(steps=4, seed=6))
    server = llm([(200, SEGMENTS, 0), (200, ANNOTATION, 0)])
    proposal, _ = do_request_proposal(trajectory, bob, "llm")
    run_proposal(proposal)
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING and proposal.error == ""
    assert (proposal.prompt_version, proposal.prompt_tokens, proposal.completion_tokens) == (
        "llm1",
        200,
        40,
    )
    content = server.requests[1]["body"]["messages"][0]["content"]
    images = [c["image_url"]["url"] for c in content if c["type"] == "image_url"]
    assert len(images) == 4 and all(u.startswith("data:image/png;base64,") for u in images)

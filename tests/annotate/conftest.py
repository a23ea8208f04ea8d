"""Trajectories to label: bob is assigned, alice is the admin, charlie an outsider."""

from __future__ import annotations

import dataclasses

import pytest

from annotate import services as s
from annotate.models import Proposal, ProposalStatus
from annotate.services import do_assign
from tests.annotate.llm_server import llm  # noqa: F401 (the fixture)
from tests.trajectories.builders import make_record
from trajectories.labels import edits
from trajectories.models import Trajectory
from trajectories.services import do_import_trajectory


def blank_record(steps: int = 6, seed: int = 7, **overrides):
    return make_record(
        steps=steps,
        seed=seed,
        subgoals=[],
        memory_targets=[],
        anchors=[],
        anchor_links=[],
        **overrides,
    )


@pytest.fixture
def blank(project, alice, bob):
    """Six steps without labels, assigned to bob."""
    trajectory, _ = do_import_trajectory(project, blank_record())
    do_assign(trajectory, bob, alice)
    return trajectory


@pytest.fixture
def labelled(project, alice, bob):
    """Three steps with every kind of label (subgoals 0–0 and 1–2), assigned to bob."""
    trajectory, _ = do_import_trajectory(project, make_record(steps=3, seed=3))
    do_assign(trajectory, bob, alice)
    return trajectory


ODD = "<b>\"odd\"</b> & 'quoted'"
ACTIONS = [
    {"type": "click", "x": 60, "y": 120},
    {"type": "type", "text": f"type {ODD} and a long tail of text to cut"},
    {"type": "swipe", "x": 10, "y": 200, "x2": 10, "y2": 100},
    {"type": "open_app", "package": "com.example.shop", "app_label": ODD},
    {"type": "long_press", "x": 5, "y": 7},
    {"type": "key", "keycode": "KEYCODE_MENU"},
    {"type": "back"},
    {"type": "wait", "duration_ms": 500},
    {"type": "answer", "text": ODD},
    {"type": "terminate", "status": "success"},
]


@pytest.fixture
def rich(project, alice, bob, dave) -> Trajectory:
    """Ten steps of every action, labels with HTML in them, comments, a proposal, history."""
    record = make_record(steps=len(ACTIONS), seed=41)
    steps = [
        dataclasses.replace(
            step,
            action=action,
            summary=["", ODD, "x" * 60][i % 3],
            target=step.target if i % 2 == 0 else None,
        )
        for i, (step, action) in enumerate(zip(record.steps, ACTIONS, strict=True))
    ]
    screens = list(record.screens)
    screens[2] = dataclasses.replace(screens[2], ui_xml=None)
    subgoals = [
        {"start": 0, "end": 1, "text": ODD, "effect": "", "behaviour": ODD, "success": "yes"},
        {"start": 2, "end": 2, "text": "", "effect": "e", "behaviour": "", "success": ""},
        {"start": 5, "end": 9, "text": "later", "effect": ODD, "behaviour": "b", "success": "no"},
    ]
    memory = [
        {
            "key": "price",
            "value": ODD,
            "encode_step": 0,
            "retrieve_steps": [3, 9],
            "evidence": {"bounds": [10, 100, 110, 140]},
        },
        {"key": ODD, "value": "", "encode_step": 3, "retrieve_steps": [], "evidence": {}},
    ]
    anchors = [
        {
            "id": "a1",
            "step": 0,
            "type": "context_info",
            "content": ODD,
            "description": ODD,
            "evidence": {"bounds": [1, 2, 30, 40]},
        },
        {"id": "a2", "step": 0, "type": "dependency", "content": "short", "description": ""},
        {"id": "a3", "step": 9, "type": "finish", "content": "x" * 30, "description": ""},
    ]
    links = [
        {"source": "a1", "target": "a3", "relation": "enables", "critical": True},
        {"source": "a3", "target": "a2", "relation": "blocks", "critical": False},
    ]
    record = dataclasses.replace(
        record,
        steps=steps,
        screens=screens,
        subgoals=subgoals,
        memory_targets=memory,
        anchors=[{"evidence": {}, **a} for a in anchors],
        anchor_links=links,
    )
    trajectory, _ = do_import_trajectory(project, record)
    s.do_assign(trajectory, bob, alice)
    trajectory.refresh_from_db()
    edits.do_add_anchor(trajectory, bob, trajectory.version, step=3, type="finish", content=ODD)
    s.do_comment(trajectory, dave, 0, f"look {ODD}")
    s.do_comment(trajectory, dave, None, "overall")
    s.do_resolve_comment(s.do_comment(trajectory, alice, 3, "fixed?"), bob)
    Proposal.objects.create(
        trajectory=trajectory,
        proposer="heuristic",
        prompt_version="v1",
        model=ODD,
        status=ProposalStatus.PENDING,
        payload={
            "subgoals": [{"start": 0, "end": 3, "text": ODD}, {"start": 6, "end": 7}],
            "memory_targets": [
                {"key": ODD, "value": "1", "encode_step": 1, "retrieve_steps": [4, 5]}
            ],
            "anchors": [{"step": 2, "type": "finish", "content": ODD}],
        },
        decisions={"subgoals": {"1": "rejected"}},
    )
    return trajectory

"""Trajectories to label: bob is assigned, alice is the admin, charlie an outsider."""

from __future__ import annotations

import pytest

from annotate.services import do_assign
from tests.annotate.llm_server import llm  # noqa: F401 (the fixture)
from tests.trajectories.builders import make_record
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

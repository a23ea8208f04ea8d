"""Generated shopping-and-notes trajectories: every screen's page (app + activity) is known."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from fixtures.generate import generate_record
from graphs.services import do_build_memory_graph
from trajectories.jobs import run_job
from trajectories.models import Screen
from trajectories.services import do_import_trajectory


def import_generated(project, seeds, steps: int = 20):
    return [do_import_trajectory(project, generate_record(seed, steps=steps))[0] for seed in seeds]


@pytest.fixture
def generated(project):
    """Six generated trajectories of 20 steps, with subgoals, oldest first."""
    return import_generated(project, range(6))


def build_now(project, user, captured, params=None, filters=None, **kwargs):
    """Queue a build and run its job here, as a worker would."""
    with captured(execute=False):
        graph = do_build_memory_graph(project, user, params, filters, **kwargs)
    run_job(graph.job_id)
    graph.refresh_from_db()
    graph.job.refresh_from_db()
    return graph


def page_of(member) -> tuple[str, str]:
    """The true page of a member screen: its app and activity."""
    from trajectories.models import Step, Trajectory

    trajectory = Trajectory.objects.get(uid=member["trajectory"])
    step = Step.objects.filter(trajectory=trajectory, index=member["step"]).first()
    screen = step.screen if step else trajectory.final_screen
    return screen.package, screen.activity


def purity_and_completeness(members_by_node) -> tuple[float, float]:
    """Purity: the share of screens in their node's majority page. Completeness: the share of
    screens in their page's majority node."""
    nodes: dict[int, Counter] = defaultdict(Counter)
    pages: dict[tuple[str, str], Counter] = defaultdict(Counter)
    total = 0
    for node, members in enumerate(members_by_node):
        for member in members:
            page = page_of(member)
            nodes[node][page] += 1
            pages[page][node] += 1
            total += 1
    purity = sum(c.most_common(1)[0][1] for c in nodes.values()) / total
    completeness = sum(c.most_common(1)[0][1] for c in pages.values()) / total
    return purity, completeness


__all__ = ["Screen", "build_now", "import_generated", "page_of", "purity_and_completeness"]

"""Every task template has a scripted solver that solves its instances on the virtual device,
reading only what an agent reads (the goal and the screen's XML)."""

from __future__ import annotations

import pytest

from agents.solvers import SOLVERS, solver_for
from devices.virtual.apps import all_templates
from tests.agents.episodes import play
from tests.devices.test_virtual_dump import check_like_a_phone

TEMPLATES = [t.id for t in all_templates()]
SEEDS = (1, 2, 3)


def test_every_template_has_a_solver():
    assert sorted(set(TEMPLATES) - set(SOLVERS)) == []


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("template_id", TEMPLATES)
def test_the_solver_solves_the_instance(device, template_id, seed):
    episode = play(device, solver_for(template_id), template_id, seed)
    assert episode.verdict == "success", episode.story()
    for xml in episode.dumps:  # every screen it went through dumps as a phone's would
        check_like_a_phone(xml)

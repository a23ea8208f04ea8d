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


@pytest.fixture(scope="module")
def small_phone(adb_server):
    """A phone of another shape: 720x1280 at 320 dpi, 360x640 dp (shorter lists on screen,
    more scrolling, a keyboard covering more)."""
    from devices.virtual import VirtualDevice
    from tests.conftest import require_chromium
    from tests.devices.conftest import free_port

    phone = VirtualDevice(
        port=free_port(), size="720x1280", seed=4, chromium_path=require_chromium()
    ).start()
    yield adb_server.connect(phone.serial)
    phone.stop()


@pytest.mark.parametrize("template_id", TEMPLATES)
def test_the_solver_solves_the_instance_on_a_phone_of_another_size(small_phone, template_id):
    episode = play(small_phone, solver_for(template_id), template_id, seed=4)
    assert episode.verdict == "success", episode.story()

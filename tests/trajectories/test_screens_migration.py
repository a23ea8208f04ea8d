"""Migration 0004: memory target evidence names its screen by index, never by row id."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from trajectories.models import MemoryTarget, Trajectory
from trajectories.services import do_import_trajectory

from .builders import make_record

pytestmark = pytest.mark.django_db

migration = importlib.import_module("trajectories.migrations.0004_screens_evidence_screen_index")


def test_row_ids_in_evidence_become_screen_indexes(project):
    first, _ = do_import_trajectory(project, make_record(steps=2, seed=1))
    second, _ = do_import_trajectory(project, make_record(steps=3, seed=2))
    screens = list(second.screens.order_by("id"))
    other_screen = first.screens.order_by("id").first()
    on_second = MemoryTarget.objects.create(
        trajectory=second, key="a", value="1", encode_step=2, evidence={"screen": screens[2].pk}
    )
    foreign = MemoryTarget.objects.create(
        trajectory=second, key="b", value="2", encode_step=1, evidence={"screen": other_screen.pk}
    )
    untouched = MemoryTarget.objects.create(
        trajectory=second, key="c", value="3", encode_step=1, evidence={"bounds": [1, 2, 3, 4]}
    )
    second.metadata = {
        "parked_memory_targets": [{"key": "d", "evidence": {"screen": screens[3].pk}}]
    }
    second.save(update_fields=["metadata"])

    migration.screen_ids_to_indexes(apps, None)

    on_second.refresh_from_db(), foreign.refresh_from_db(), untouched.refresh_from_db()
    assert on_second.evidence == {"screen": 2}
    assert foreign.evidence == {}  # another trajectory's screen: not this one's evidence
    assert untouched.evidence == {"bounds": [1, 2, 3, 4]}
    parked = Trajectory.objects.get(pk=second.pk).metadata["parked_memory_targets"]
    assert parked[0]["evidence"] == {"screen": 3}

"""The JSON columns an import writes in bulk (orjson's text, or the database's own for what
orjson refuses or writes otherwise): the same data is read back, and what the database refused
before it still refuses."""

from __future__ import annotations

import pytest

from formats.catalogue import export_trajectories, import_trajectories
from tests.formats.test_native_format import rewrite
from tests.trajectories.builders import make_record
from trajectories.models import Anchor, Screen, Step, Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db

ODD = {
    "big": 2**70,  # orjson refuses an integer beyond 64 bits
    "small": -(2**64),
    "text": "ünïcode ✓ \u2028",
    "null": None,
    "nested": [{"x": 1.5, "y": [True, False]}],
}


@pytest.fixture
def exported(project, tmp_path):
    for seed in range(3):  # the first trajectory is written alone, the next two in a chunk
        do_import_trajectory(project, make_record(steps=2, seed=seed))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    Trajectory.objects.all().delete()
    return out


def test_json_columns_read_back_the_data_imported(project, exported):
    def change(lines):
        for line in lines:
            line["screens"][0]["features"] = ODD
            line["steps"][1]["target"] = {"bounds": [1, 2, 3, 4], **ODD}
            line["anchors"][0]["evidence"] = ODD
            line["metadata"]["odd"] = ODD

    rewrite(exported, change)
    assert import_trajectories(project, exported)["created"] == 3
    for trajectory in Trajectory.objects.all():
        assert trajectory.metadata["odd"] == ODD
        screens = list(Screen.objects.filter(trajectory=trajectory).order_by("id"))
        assert screens[0].features == ODD and screens[1].features == {}
        assert Step.objects.get(trajectory=trajectory, index=1).target == {
            "bounds": [1, 2, 3, 4],
            **ODD,
        }
        assert Anchor.objects.filter(trajectory=trajectory, evidence=ODD).count() == 1
    big = Screen.objects.filter(features__big=2**70)
    assert big.count() == 3 and isinstance(big.first().features["big"], int)


@pytest.mark.parametrize("odd", ["NaN", "Infinity"])
def test_a_nan_in_a_json_column_is_refused_by_the_database_as_before(project, exported, odd):
    """orjson would write null, which the database takes: the database's own text is written
    instead, which it refuses (SQLite's JSON check, PostgreSQL's jsonb)."""

    def change(lines):
        for line in lines[1:]:  # the two trajectories written in one chunk
            line["screens"][0]["features"] = {"score": float(odd)}

    rewrite(exported, change)
    with pytest.raises(Exception):  # noqa: B017 (each database refuses in its own words)
        import_trajectories(project, exported)
    assert Trajectory.objects.count() == 1  # the first, written alone
    assert not Screen.objects.exclude(features={}).exists()

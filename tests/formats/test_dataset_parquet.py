"""Every dataset format written as Parquet too: the same records, the images embedded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from formats.catalogue import export_trajectories
from tests.trajectories.builders import make_record
from trajectories.models import Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(
    ("fmt", "split", "records"),
    [("androtmem", "test", 2), ("memory-world", "test", 2), ("androidcontrol", "train", 5)],
)
def test_each_format_writes_parquet_with_the_images_embedded(
    project, tmp_path, fmt, split, records
):
    datasets = pytest.importorskip("datasets")
    do_import_trajectory(project, make_record(steps=3, seed=1))
    do_import_trajectory(project, make_record(steps=2, seed=2))
    out = tmp_path / fmt
    export_trajectories(
        Trajectory.objects.filter(project=project), out, fmt, options={"parquet": True}
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert f"{split}.parquet" in manifest["files"]
    loaded = datasets.load_dataset(
        "parquet", data_files={split: str(out / f"{split}.parquet")}, cache_dir=str(tmp_path / "hf")
    )[split]
    jsonl = lines(out / f"{split}.jsonl")
    assert len(loaded) == len(jsonl) == records
    for row, record in zip(loaded, jsonl, strict=True):
        embedded = row.pop("image_files")
        assert embedded, "every record names at least one image"
        for image in embedded:
            assert image["path"].startswith("images/")
            assert image["bytes"] == (out / image["path"]).read_bytes()
        if fmt == "androtmem":
            # Parquet cannot store an object with no fields: an evidence that is {} in every
            # anchor of the file is null there, and everything else is the same.
            for step in record["steps"]:
                for anchor in step["extra_info"]["status"]:
                    assert anchor["evidence"] == {}
                    anchor["evidence"] = None
        assert {k: v for k, v in row.items() if k in record} == record
    images = loaded.cast_column("image_files", datasets.Sequence(datasets.Image()))
    assert images[0]["image_files"][0].size == (120, 240)


PARQUET_EXTRA = (
    "options.parquet: Parquet export needs the parquet extra: pip install 'waypoint[parquet]'"
)


def test_a_parquet_export_without_the_parquet_extra_is_refused_naming_it(
    project, alice, client, tmp_path, monkeypatch
):
    from django.urls import reverse
    from rest_framework.test import APIClient

    from trajectories.models import Job
    from trajectories.validation import InvalidData

    do_import_trajectory(project, make_record(steps=2, seed=1))
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` fails
    api = APIClient()
    api.force_authenticate(alice)
    response = api.post(
        f"/api/v1/projects/{project.pk}/exports/",
        {"format": "androtmem", "options": {"parquet": True}},
        format="json",
    )
    assert response.status_code == 422
    assert response.json() == {"detail": PARQUET_EXTRA}
    client.force_login(alice)
    page = client.post(
        reverse("project-export", args=[project.pk]), {"format": "memory-world", "parquet": "on"}
    )
    assert page.status_code == 200
    assert PARQUET_EXTRA.replace("'", "&#x27;") in page.content.decode()
    assert not Job.objects.exists()
    # an export queued before the extra went away fails with the same words
    with pytest.raises(InvalidData) as caught:
        export_trajectories(
            Trajectory.objects.filter(project=project),
            tmp_path / "out",
            "androidcontrol",
            options={"parquet": True},
        )
    assert str(caught.value) == PARQUET_EXTRA and not (tmp_path / "out").exists()
    # without Parquet the export goes on
    export_trajectories(Trajectory.objects.filter(project=project), tmp_path / "plain", "androtmem")
    assert not list((tmp_path / "plain").glob("*.parquet"))

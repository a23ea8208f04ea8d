"""In Chromium: the evaluator page refuses a hostile benchmark or predictions file with a
message that names the place, in view, where it used to answer a server error (or spend a
gigabyte unpacking a bomb)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.contrib.auth import get_user_model

from tests.annotate.test_workspace_browser import page_as
from tests.conftest import shot
from trajectories.services import do_create_project

TASK = {"task_id": "T1", "steps": [{"step_index": 0, "actionForm": {"action": "tap"}}]}


def bomb() -> bytes:
    """An androtmem export whose split file unpacks to 16 MiB from ~16 KiB."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("export/manifest.json", json.dumps({"format": "androtmem"}))
        archive.writestr("export/test.jsonl", json.dumps(TASK) + "\n" + " " * 16 * 1024**2)
    return out.getvalue()


def upload(name: str, data: bytes) -> dict:
    return {"name": name, "mimeType": "application/octet-stream", "buffer": data}


@pytest.mark.django_db(transaction=True)
def test_the_evaluator_page_names_what_is_wrong_with_a_hostile_upload(browser, live_server):
    alice = get_user_model().objects.create_user("alice", password="alice-password")
    project = do_create_project("Shops", alice)
    page = page_as(browser, live_server, alice, size=(1440, 900))
    url = f"{live_server.url}/projects/{project.pk}/evaluate/"
    for name, benchmark, predictions, message in (
        (
            "bomb",
            upload("bench.zip", bomb()),
            upload("p.jsonl", b"{}\n"),
            "bench.zip: unpacks to 16.0 MiB",
        ),
        (
            "deep",
            upload("gt.jsonl", (json.dumps(TASK) + "\n").encode()),
            upload("p.jsonl", b"[" * 100_000 + b"\n"),
            "predictions line 1: invalid JSON: nested too deeply",
        ),
    ):
        page.goto(url)
        page.set_input_files("#id_benchmark", files=[benchmark])
        page.set_input_files("#id_predictions", files=[predictions])
        page.click(".evaluate-page form button[type=submit]")
        alert = page.locator(".evaluate-page [role=alert]")
        alert.wait_for()
        assert message in alert.inner_text()
        box = alert.bounding_box()
        assert box["y"] + box["height"] <= 900  # in view, above the fold
        widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1]
        shot(page, f"evaluator-hostile-{name}")
    assert page.errors == []

"""Filmstrip thumbnails: made small in bounded memory, and a placeholder for an unreadable image."""

from __future__ import annotations

import dataclasses
import io
import os
import subprocess
import sys

import pytest
from django.urls import reverse
from PIL import Image

from tests.conftest import REPO
from tests.formats.test_import_images import png_of_noise, screenshot
from tests.trajectories.builders import make_record
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


def stored(project, image: bytes, width: int, height: int) -> str:
    """Store a trajectory showing ``image`` without the import's checks (as older imports did)."""
    record = make_record(steps=1, seed=9)
    screens = [
        dataclasses.replace(s, screenshot=image, width=width, height=height) for s in record.screens
    ]
    trajectory, _ = do_import_trajectory(project, dataclasses.replace(record, screens=screens))
    return trajectory.screens.first().screenshot_id


def test_a_large_screenshot_gets_a_small_thumbnail(client, project, alice):
    sha = stored(project, screenshot(4096, 4096), 4096, 4096)
    client.force_login(alice)
    response = client.get(reverse("device-thumbnail", args=[sha]))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/webp"
    with Image.open(io.BytesIO(b"".join(response.streaming_content))) as thumb:
        assert thumb.size == (216, 216)


# Makes one thumbnail in a fresh process and prints the peak memory it added, in MiB. The
# peak is the process's own (VmHWM): ru_maxrss would count the pytest process it forked from.
MEASURE_THUMBNAIL = """
import re, sys
import django
django.setup()
from trajectories.images import make_thumbnail
def peak_kib():
    with open("/proc/self/status") as status:
        return int(re.search(r"VmHWM:\\s*(\\d+) kB", status.read()).group(1))
data = sys.stdin.buffer.read()
before = peak_kib()
make_thumbnail(data)
print((peak_kib() - before) / 1024)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_thumbnail_of_the_largest_screenshot_costs_no_more_than_its_pixels(tmp_path):
    """The decoded 4096x4096 image (64 MiB) is the one full-size copy a thumbnail makes.

    The thumbnail code before converted the whole image to RGB beside it: about 130 MiB.
    """
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="1",
        WAYPOINT_VAR_DIR=str(tmp_path),
    )
    done = subprocess.run(
        [sys.executable, "-c", MEASURE_THUMBNAIL],
        input=screenshot(4096, 4096),
        capture_output=True,
        cwd=REPO,
        env=env,
        timeout=120,
        check=True,
    )
    added_mib = float(done.stdout.decode().split()[-1])
    assert added_mib <= 64 * 1.5, f"the thumbnail added {added_mib:.0f} MiB at its peak"


def test_a_jpeg_screenshot_keeps_its_proportions(client, project, alice):
    sha = stored(project, screenshot(1080, 2400, "JPEG"), 1080, 2400)
    client.force_login(alice)
    response = client.get(reverse("device-thumbnail", args=[sha]))
    with Image.open(io.BytesIO(b"".join(response.streaming_content))) as thumb:
        assert thumb.size == (216, 480)


def test_an_image_that_cannot_be_decoded_gets_a_placeholder(client, project, alice):
    sha = stored(project, png_of_noise(120, 240), 120, 240)
    client.force_login(alice)
    response = client.get(reverse("device-thumbnail", args=[sha]))
    assert response.status_code == 422
    assert response["Content-Type"] == "image/svg+xml"
    assert b"unreadable image" in response.content
    assert "immutable" not in response.get("Cache-Control", "")


def test_an_image_over_the_side_limit_gets_a_placeholder_without_being_decoded(
    client, project, alice
):
    sha = stored(project, png_of_noise(100_000, 100_000), 120, 240)
    client.force_login(alice)
    response = client.get(reverse("device-thumbnail", args=[sha]))
    assert response.status_code == 422
    assert b"unreadable image" in response.content


def test_an_outsider_gets_no_thumbnail(client, project, charlie):
    sha = stored(project, screenshot(120, 240), 120, 240)
    client.force_login(charlie)
    assert client.get(reverse("device-thumbnail", args=[sha])).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_chromium_draws_the_placeholder_in_place_of_the_thumbnail(browser, live_server, alice, bob):
    from tests.annotate.test_workspace_browser import page_as
    from tests.conftest import shot
    from trajectories.services import do_create_project, do_set_membership

    project = do_create_project("Shops", alice)
    do_set_membership(project, bob, "annotator", alice)
    broken = stored(project, png_of_noise(120, 240), 120, 240)
    page = page_as(browser, live_server, alice)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/projects/{project.pk}/trajectories/")
    url = reverse("device-thumbnail", args=[broken])
    width = page.evaluate(
        """url => new Promise(resolve => {
            const img = Object.assign(new Image(), {src: url});
            img.style = "position: fixed; top: 120px; right: 40px; border: 1px solid #999";
            img.onload = () => resolve(img.naturalWidth);
            img.onerror = () => resolve(-1);
            document.body.append(img);
        })""",
        url,
    )
    assert width == 216
    shot(page, "images-thumbnail-placeholder")

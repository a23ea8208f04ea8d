"""Imported images are decoded in full, held to a size per side, and named when refused."""

from __future__ import annotations

import dataclasses
import io
import os
import struct
import zlib
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from PIL import Image, ImageDraw

from formats.catalogue import export_trajectories, import_trajectories
from tests.trajectories.builders import make_record
from trajectories.models import Trajectory
from trajectories.services import do_import_trajectory

from .test_native_format import _first_screenshot, _replace_file, assert_refused

pytestmark = pytest.mark.django_db


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_of_noise(width: int = 120, height: int = 240) -> bytes:
    """A PNG with a perfect header and chunk checksums whose pixel data is random bytes."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", os.urandom(4000))
        + _chunk(b"IEND", b"")
    )


def screenshot(width: int, height: int, fmt: str = "PNG") -> bytes:
    """A screenshot-like image: a flat background with a few bars."""
    image = Image.new("RGB", (width, height), (30, 80, 160))
    draw = ImageDraw.Draw(image)
    for top in range(0, height, 128):
        draw.rectangle((16, top, width - 16, top + 48), fill=(top % 256, 220, 120))
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


@pytest.fixture
def fresh(project, tmp_path) -> Path:
    do_import_trajectory(project, make_record(steps=2, seed=7))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    Trajectory.objects.all().delete()
    return out


def test_it_refuses_a_png_whose_pixel_data_is_random(project, fresh):
    shot = _first_screenshot(fresh)
    _replace_file(fresh, shot, png_of_noise())
    assert_refused(
        project,
        fresh,
        f"trajectories.jsonl line 1: screens[0].screenshot (screens/{shot.name}): "
        "unreadable image (broken data stream when reading image file)",
    )


def test_the_command_names_the_image_it_could_not_decode(project, fresh):
    shot = _first_screenshot(fresh)
    _replace_file(fresh, shot, png_of_noise())
    with pytest.raises(CommandError) as caught:
        call_command("import_trajectories", fresh, "--project", project.pk, stdout=io.StringIO())
    assert str(caught.value) == (
        "import failed, nothing was imported: trajectories.jsonl line 1: screens[0].screenshot "
        f"(screens/{shot.name}): unreadable image (broken data stream when reading image file)"
    )


def test_it_refuses_an_image_wider_than_the_limit(project, fresh):
    shot = _first_screenshot(fresh)
    _replace_file(fresh, shot, screenshot(4097, 8))
    assert_refused(
        project,
        fresh,
        f"trajectories.jsonl line 1: screens[0].screenshot (screens/{shot.name}): "
        "the image is 4097x8 pixels, over the limit of 4096 pixels per side "
        "(WAYPOINT_MAX_IMAGE_SIDE)",
    )


def test_a_decompression_bomb_is_refused_by_its_header(project, fresh):
    # 100,000 x 100,000 pixels claimed in 100 bytes: Pillow alone would raise
    # DecompressionBombError; the import names the limit instead, and decodes nothing.
    shot = _first_screenshot(fresh)
    _replace_file(fresh, shot, png_of_noise(100_000, 100_000))
    assert_refused(
        project,
        fresh,
        f"trajectories.jsonl line 1: screens[0].screenshot (screens/{shot.name}): "
        "the image is 100000x100000 pixels, over the limit of 4096 pixels per side "
        "(WAYPOINT_MAX_IMAGE_SIDE)",
    )


def test_the_limit_is_a_setting(project, fresh, settings):
    settings.WAYPOINT_MAX_IMAGE_SIDE = 200
    shot = _first_screenshot(fresh)
    assert_refused(
        project,
        fresh,
        f"trajectories.jsonl line 1: screens[0].screenshot (screens/{shot.name}): "
        "the image is 120x240 pixels, over the limit of 200 pixels per side "
        "(WAYPOINT_MAX_IMAGE_SIDE)",
    )


def test_a_legal_screenshot_of_the_largest_size_imports(project, tmp_path):
    big = screenshot(4096, 4096)
    record = make_record(steps=1, seed=8)
    screens = [
        dataclasses.replace(s, screenshot=big, width=4096, height=4096) for s in record.screens
    ]
    do_import_trajectory(project, dataclasses.replace(record, screens=screens))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    Trajectory.objects.all().delete()
    assert import_trajectories(project, out)["created"] == 1
    assert Trajectory.objects.get().screens.first().width == 4096


def test_a_droidbot_screenshot_of_random_pixels_is_refused_by_name(project, tmp_path):
    from .test_droidbot import broken_import, copy_run

    run = copy_run(tmp_path)
    shot = run / "states" / "screen_2017-08-11_155448.png"
    with Image.open(shot) as image:
        size = image.size
    shot.write_bytes(png_of_noise(*size))
    assert broken_import(project, run) == (
        "states/screen_2017-08-11_155448.png: "
        "unreadable image (broken data stream when reading image file)"
    )


def test_a_droidbot_screenshot_claiming_a_huge_size_is_refused_by_the_limit(project, tmp_path):
    from .test_droidbot import broken_import, copy_run

    run = copy_run(tmp_path)
    shot = run / "states" / "screen_2017-08-11_155448.png"
    shot.write_bytes(png_of_noise(100_000, 100_000))
    assert broken_import(project, run) == (
        "states/screen_2017-08-11_155448.png: the image is 100000x100000 pixels, "
        "over the limit of 4096 pixels per side (WAYPOINT_MAX_IMAGE_SIDE)"
    )


def webp_claiming(width: int, height: int) -> bytes:
    """A small lossless WebP wrapped in an extended header claiming a canvas of another size."""
    out = io.BytesIO()
    Image.new("RGB", (64, 64), (1, 2, 3)).save(out, "WEBP", lossless=True)
    image = out.getvalue()[12:]
    header = bytes(4) + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    body = b"WEBP" + b"VP8X" + struct.pack("<I", 10) + header + image
    return b"RIFF" + struct.pack("<I", len(body)) + body


@pytest.mark.parametrize(
    "data, size",
    [
        (webp_claiming(16384, 16384), "16384x16384"),
        (screenshot(5000, 16, "WEBP"), "5000x16"),
        (screenshot(64, 5000, "JPEG"), "64x5000"),
    ],
)
def test_webp_and_jpeg_over_the_limit_are_refused_by_name(project, fresh, data, size):
    shot = _first_screenshot(fresh)
    _replace_file(fresh, shot, data)
    assert_refused(
        project,
        fresh,
        f"trajectories.jsonl line 1: screens[0].screenshot (screens/{shot.name}): "
        f"the image is {size} pixels, over the limit of 4096 pixels per side "
        "(WAYPOINT_MAX_IMAGE_SIDE)",
    )

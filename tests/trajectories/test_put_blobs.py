"""Blobs stored from an import's checked files: each once, read back as written,
and a file changed since its check refused by name."""

from __future__ import annotations

import hashlib

import pytest

from tests.trajectories.builders import png
from trajectories.blobs import put_blobs, read_blob
from trajectories.models import Blob
from trajectories.records import FileRef
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db


def checked_files(tmp_path, count: int) -> list[tuple[FileRef, str]]:
    refs = []
    for i in range(count):
        data = png(500 + i)
        path = tmp_path / f"{i}.png"
        path.write_bytes(data)
        refs.append((FileRef(path, hashlib.sha256(data).hexdigest(), len(data)), "image/png"))
    return refs


def test_it_stores_each_file_once_and_reads_it_back(tmp_path):
    refs = checked_files(tmp_path, 12)
    blobs = put_blobs(refs + refs[:3] + [(b"<hierarchy/>", "text/xml")])
    assert Blob.objects.count() == 13 == len(blobs)
    for ref, _ in refs:
        assert read_blob(blobs[ref.sha256]) == ref.path.read_bytes()
        assert blobs[ref.sha256].size == ref.size
    assert put_blobs(refs) == {ref.sha256: blobs[ref.sha256] for ref, _ in refs}


def test_a_file_changed_since_its_check_is_refused_and_no_row_names_it(tmp_path):
    refs = checked_files(tmp_path, 12)
    changed = refs[5][0].path
    changed.write_bytes(png(999))
    with pytest.raises(InvalidData, match=r"^5\.png: the file changed while the import ran$"):
        put_blobs(refs)
    assert Blob.objects.count() == 0

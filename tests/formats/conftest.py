"""Fixtures the format tests share."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest

from formats.catalogue import IMPORTERS
from formats.spool import spool_closed


@pytest.fixture
def read_folder():
    """Read a folder as the import of a format does, ``read_folder(folder, "aitw")``; the
    spools live until the test ends."""
    with ExitStack() as stack:

        def reader(folder: Path, fmt: str) -> list:
            checked = stack.enter_context(spool_closed({}))
            read_format, _ = IMPORTERS[fmt]
            return [record for _, record in read_format(folder, checked)]

        yield reader

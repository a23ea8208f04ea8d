"""A spool for imports whose screenshots live inside their records (TFRecord shards).

:func:`formats.catalogue.import_trajectories` reads an import twice: once to check every
record, once to write them in chunks. A reader of a folder of files gives each screenshot as a
:class:`~trajectories.records.FileRef`, so a chunk of records in memory holds no image bytes;
a reader of records that carry their images (PNG bytes, raw pixels) would hold a chunk's images
and decode every record twice. :func:`spooled` wraps such a reader: on the first pass each
screenshot and UI dump goes to a file of a temporary folder (named by its sha256, written once)
and each record, holding only their FileRefs, is pickled to the spool's record file; the second
pass reads the records back from it. Memory holds one record (one episode) at a time, whatever
the size of the shards. The folder goes with the ``checked`` dict of the import.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from trajectories.records import FileRef, TrajectoryRecord

SPOOL = "spool"  # the key of the spool in a reader's ``checked`` dict

Source = Callable[[Path, "Spool"], Iterator[tuple[str, TrajectoryRecord]]]


class Spool:
    def __init__(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="waypoint-spool-")
        self.root = Path(self._folder.name)
        self._records = open(self.root / "records.pickle", "wb")  # noqa: SIM115 (kept open)
        self.complete = False

    def file(self, data: bytes, suffix: str) -> FileRef:
        """``data`` as a file of the spool (written once per content)."""
        sha = hashlib.sha256(data).hexdigest()
        path = self.root / f"{sha}{suffix}"
        if not path.exists():
            path.write_bytes(data)
        return FileRef(path, sha, len(data))

    def keep(self, where: str, record: TrajectoryRecord) -> None:
        pickle.dump((where, record), self._records, protocol=pickle.HIGHEST_PROTOCOL)

    def finish(self) -> None:
        self._records.close()
        self.complete = True

    def replay(self) -> Iterator[tuple[str, TrajectoryRecord]]:
        """The records kept, in order (the spool's own file, written by this process)."""
        with open(self.root / "records.pickle", "rb") as handle:
            while True:
                try:
                    yield pickle.load(handle)
                except EOFError:
                    return

    def close(self) -> None:
        self._records.close()
        self._folder.cleanup()


@contextlib.contextmanager
def spool_closed(checked: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``checked``, whose spool (if a reader made one) is removed when the import ends."""
    try:
        yield checked
    finally:
        spool = checked.pop(SPOOL, None)
        if spool is not None:
            spool.close()


def spooled(source: Source) -> Callable[..., Iterator[tuple[str, TrajectoryRecord]]]:
    """A reader that reads ``source`` once into a spool and replays it on later passes."""

    def reader(
        folder: Path, checked: dict[str, Any] | None = None
    ) -> Iterator[tuple[str, TrajectoryRecord]]:
        checked = {} if checked is None else checked
        spool = checked.get(SPOOL)
        if spool is not None and spool.complete:
            yield from spool.replay()
            return
        if spool is not None:
            spool.close()  # a first pass left unfinished: start again
        spool = checked[SPOOL] = Spool()
        for where, record in source(Path(folder), spool):
            spool.keep(where, record)
            yield where, record
        spool.finish()

    reader.__doc__ = source.__doc__
    reader.__name__ = source.__name__
    return reader

"""What the exports into other datasets' own layouts share (``gui-odyssey``, ``aitw``,
``androidcontrol-tfrecord``): the files of a native record's screens, stand-ins for missing
screenshots, the episode id an imported episode had, the list of steps a format cannot express,
and the counts of the episodes written.

A step with no equivalent in the target format is left out of its episode (the episode's
steps are numbered again without it) and written to ``unmapped.jsonl`` with its episode, its
Waypoint step index, its split and its Waypoint action, as the ``androidcontrol`` export does;
the dataset card counts such steps by action type.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from django.core.files.storage import default_storage

from trajectories.models import blob_storage_name

from .dataset import DatasetWriter, ExportRun, card_counts
from .droidbot import ANDROID_VERSIONS
from .imported import missing_screenshot

UNMAPPED_FILE = "unmapped"
API_LEVELS = {version: level for level, version in ANDROID_VERSIONS.items()}


def blob_bytes(name: str) -> bytes:
    """The bytes of a file a native record names (``screens/<sha>.png``, ``xml/<sha>.xml``)."""
    sha, extension = name.rsplit("/", 1)[1].split(".")
    with default_storage.open(blob_storage_name(sha, extension), "rb") as handle:
        return handle.read()


def blob_extension(name: str) -> str:
    return name.rsplit(".", 1)[1]


def _stand_in_sha(width: int, height: int) -> str:
    return hashlib.sha256(missing_screenshot(width, height)).hexdigest()


def is_stand_in(screen: dict[str, Any]) -> bool:
    """Whether a screen's screenshot is the grey stand-in an import put for a missing one: a
    dataset that has none says so again rather than carrying grey pixels."""
    sha = screen["screenshot"].rsplit("/", 1)[1].split(".")[0]
    return sha == _stand_in_sha(screen["width"], screen["height"])


def episode_id(record: dict[str, Any], fmt: str) -> str:
    """The id an episode imported from ``fmt`` had, else the trajectory's id."""
    meta = (record.get("metadata") or {}).get(fmt) or {}
    found = meta.get("episode_id")
    return str(found) if found not in (None, "") else record["id"]


def originals(record: dict[str, Any], fmt: str) -> list[Any]:
    """The original actions an import from ``fmt`` kept, one per step (else none)."""
    meta = (record.get("metadata") or {}).get(fmt) or {}
    found = meta.get("actions")
    if isinstance(found, list) and len(found) == len(record["steps"]):
        return found
    return [None] * len(record["steps"])


class Unmapped:
    """The steps a format cannot express: written apart and counted by action type."""

    def __init__(self, writer: Any):
        self.writer = writer
        self.kinds: Counter = Counter()

    def add(self, episode: str | int, step: dict[str, Any], split: str) -> None:
        self.writer.write(
            UNMAPPED_FILE,
            {
                "episode_id": episode,
                "step_index": step["index"],
                "split": split,
                "waypoint_action": step["action"],
            },
        )
        self.kinds[step["action"]["type"]] += 1

    @property
    def total(self) -> int:
        return sum(self.kinds.values())

    def rows(self) -> str:
        return "\n".join(f"| {kind} | {n} |" for kind, n in sorted(self.kinds.items())) or (
            "| - | 0 |"
        )


def layout_writer(dest: Path, fmt: str, schema_version: int) -> DatasetWriter:
    """The writer of a folder in a dataset's own layout: its one JSON Lines file is
    ``unmapped.jsonl``, every other file the format lays out itself."""
    return DatasetWriter(dest, fmt, schema_version, splits=[UNMAPPED_FILE], apart=[UNMAPPED_FILE])


class Episodes:
    """The episodes an export writes, counted per split and app, and the steps it leaves out."""

    def __init__(self, run: ExportRun, writer: DatasetWriter):
        self.run, self.writer = run, writer
        self.unmapped = Unmapped(writer)
        self.counts: dict[str, Any] = {
            "trajectories": 0,
            "episodes": 0,
            "steps": 0,
            "empty_episodes": 0,
        }

    def add(self, record: dict[str, Any], split: str, steps: int) -> None:
        """A trajectory written as an episode of ``steps`` steps (none: it has no episode)."""
        self.counts["trajectories"] += 1
        if steps:
            self.run.per_split[split]["episodes"] += 1
            self.counts["episodes"] += 1
            self.counts["steps"] += steps
            self.run.count_apps(record, split)
        else:
            self.counts["empty_episodes"] += 1

    def card_end(self) -> str:
        """The end of the dataset card: the steps left out by action type, the counts."""
        return f"""| Waypoint action | steps |
|---|---|
{self.unmapped.rows()}

## Counts

{card_counts(self.run.per_split, self.run.apps, "episodes")}

`manifest.json` lists the sha256 of every file.
"""

    def finish(self, filters: dict[str, Any] | None, card: str) -> dict[str, Any]:
        """Write the card and the manifest; the counts."""
        counts = self.counts
        counts["splits"] = {k: sum(v.values()) for k, v in self.run.per_split.items()}
        counts["unmapped"] = self.unmapped.total
        counts["unmapped_actions"] = dict(sorted(self.unmapped.kinds.items()))
        return self.writer.finish(self.run.head({}, filters), counts, card)

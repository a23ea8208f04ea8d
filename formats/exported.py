"""What the exports into other datasets' own layouts share (``gui-odyssey``, ``aitw``): the
files of a native record's screens, stand-ins for missing screenshots, the episode id an
imported episode had, and the list of steps a format cannot express.

A step with no equivalent in the target format is left out of its episode (the episode's
steps are numbered again without it) and written to ``unmapped.jsonl`` with its episode, its
Waypoint step index, its split and its Waypoint action, as the ``androidcontrol`` export does;
the dataset card counts such steps by action type.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from django.core.files.storage import default_storage

from trajectories.models import blob_storage_name

from .imported import missing_screenshot

UNMAPPED_FILE = "unmapped"


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

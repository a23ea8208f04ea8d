"""In-memory records of a trajectory, the common currency of every importer.

A reader (native JSONL, DroidBot, the demo generator, the recorder) builds a
:class:`TrajectoryRecord`; :func:`trajectories.services.do_import_trajectory` checks it with
the rules of ``trajectories.validation`` and writes it in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class FileRef:
    """A file of an import, already checked (path, sha256, content), that stands for its bytes.

    Readers give one instead of the bytes once a file has been verified, so a file shared by
    many screens is read, hashed and decoded once; the write reads it again only if its blob is
    not stored yet, and checks its sha256 again as it does.
    """

    path: Path
    sha256: str
    size: int


@dataclass
class TaskRecord:
    uid: str
    goal: str
    apps: list[str] = field(default_factory=list)
    intent: str = ""
    difficulty: str = ""
    gold_answer: str = ""
    grading_rule: str = "exact"
    memory_items: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ScreenRecord:
    screenshot: bytes | FileRef
    ui_xml: bytes | FileRef | None = None
    width: int = 0
    height: int = 0
    package: str = ""
    activity: str = ""
    captured_at: datetime | None = None
    features: dict[str, Any] = field(default_factory=dict)
    visible_memory: list[dict[str, Any]] = field(default_factory=list)
    screenshot_type: str = "image/png"


@dataclass
class StepRecord:
    index: int
    screen: int
    action: dict[str, Any]
    target: dict[str, Any] | None = None
    thought: str = ""
    summary: str = ""
    memory: str = ""
    trainable: bool = True
    action_sent_at: datetime | None = None
    settled_at: datetime | None = None


@dataclass
class TrajectoryRecord:
    uid: str
    task: TaskRecord
    screens: list[ScreenRecord]
    steps: list[StepRecord]
    final_screen: int | None = None
    device: dict[str, Any] = field(default_factory=dict)
    source: str = "imported"
    status: str = "annotating"
    outcome: str = "uncertain"
    recorded_by: str | None = None
    recorded_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    subgoals: list[dict[str, Any]] = field(default_factory=list)
    memory_targets: list[dict[str, Any]] = field(default_factory=list)
    anchors: list[dict[str, Any]] = field(default_factory=list)
    anchor_links: list[dict[str, Any]] = field(default_factory=list)

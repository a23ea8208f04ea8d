"""What every training or benchmark export shares: options, splits, the writer, the manifest.

A dataset export is a folder written under a temporary name and renamed when complete::

    manifest.json     format, schema version, options, filter, split, counts, Waypoint version,
                      sha256 of every other file
    README.md         the dataset card: what it holds, counts per split and app, how to load it
    <split>.jsonl     the records of each split (``train.jsonl``, ``test.jsonl``, ...)
    images/...        screenshots, referenced by paths relative to the folder

Nothing depends on database ids, the export time or the machine, so the same trajectories with
the same options give byte-identical folders. Records are streamed a chunk of trajectories at a
time (see :func:`formats.waypoint.iter_records`) and checksums go to a side file,
so memory does not grow with the dataset.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import shutil
import tempfile
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import IO, Any

from django.core.files.storage import default_storage
from django.db.models import Q, QuerySet
from PIL import Image

from trajectories.models import ActionType, Screen, Step, Trajectory, blob_storage_name
from trajectories.validation import InvalidData

from .parquet import card_section, write_parquet

MANIFEST = "manifest.json"
CARD = "README.md"
IMAGES = "images"

Progress = Callable[[int, int], None]
RECENT_IMAGES = 4096


def waypoint_version() -> str:
    try:
        return metadata.version("waypoint")
    except metadata.PackageNotFoundError:
        return "unknown"


def dump_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


# ---------------------------------------------------------------- apps

NO_APP = "(no app)"


def is_system_package(package: str) -> bool:
    """The phone itself rather than an app a task is about: the framework, the system UI or a
    launcher (the home screen a recording starts from)."""
    return package in ("android", "com.android.systemui") or "launcher" in package.lower()


def used_apps(
    task_apps: list[str] | None, opened: Iterable[str], shown: Iterable[str]
) -> list[str]:
    """The apps a trajectory is filed under in dataset cards and app splits: its task's apps;
    for a task that names none, the apps the trajectory actually used, those it opened and
    those its screens showed (system packages aside), in that order; ``(no app)`` only when
    it used none either."""
    if task_apps:
        return list(task_apps)
    used = dict.fromkeys(p for p in (*opened, *shown) if p and not is_system_package(p))
    return list(used) or [NO_APP]


def record_apps(record: dict[str, Any]) -> list[str]:
    """:func:`used_apps` of a native record."""
    opened = (
        step["action"].get("package") or ""
        for step in record["steps"]
        if step["action"]["type"] == ActionType.OPEN_APP
    )
    shown = (screen["package"] for screen in record["screens"])
    return used_apps(record["task"]["apps"], opened, shown)


def apps_by_uid(trajectories: QuerySet[Trajectory]) -> dict[str, list[str]]:
    """:func:`used_apps` of every trajectory, by uid: the task's apps in one query, and for
    those whose task names none, the apps opened and shown in two more."""
    rows = list(trajectories.order_by().values_list("uid", "task__apps"))
    found = {str(uid): list(apps or []) for uid, apps in rows}
    if all(found.values()):
        return found
    unnamed = trajectories.filter(Q(task__apps=[]) | Q(task__apps__isnull=True))
    opened: dict[str, list[str]] = {}
    for uid, package in (
        Step.objects.filter(trajectory__in=unnamed, action_type=ActionType.OPEN_APP)
        .order_by("trajectory_id", "index")
        .values_list("trajectory__uid", "action__package")
    ):
        opened.setdefault(str(uid), []).append(package or "")
    shown: dict[str, list[str]] = {}
    for uid, package in (
        Screen.objects.filter(trajectory__in=unnamed)
        .order_by("trajectory_id", "id")
        .values_list("trajectory__uid", "package")
    ):
        shown.setdefault(str(uid), []).append(package)
    return {
        uid: used_apps(apps, opened.get(uid, ()), shown.get(uid, ())) for uid, apps in found.items()
    }


# ---------------------------------------------------------------- splits

SPLIT_BY = ("trajectory", "task", "app")


@dataclass(frozen=True)
class Split:
    """How trajectories are divided: ``ratios`` by name, ``by`` trajectory, task or app.

    Grouped splits (by task or by app) keep every trajectory of a group in one split, so no
    task (or app) is seen in two splits; by app, trajectories that share any app are one group
    (a cross-app task joins its apps). The assignment depends only on the seed and the
    trajectories' identities.
    """

    ratios: tuple[tuple[str, float], ...] = ()
    by: str = "trajectory"
    seed: int = 0

    @classmethod
    def parse(cls, value: Any, default_name: str) -> Split:
        """From ``{"ratios": {"train": 0.9, "test": 0.1}, "by": "task", "seed": 1}`` or None."""
        if not value:
            return cls(ratios=((default_name, 1.0),))
        if not isinstance(value, dict):
            raise InvalidData("split: must be an object with ratios, by and seed")
        unknown = set(value) - {"ratios", "by", "seed"}
        if unknown:
            raise InvalidData(
                f"split: unknown field {sorted(unknown)[0]!r} (known: ratios, by, seed)"
            )
        ratios = value.get("ratios") or {default_name: 1.0}
        if not isinstance(ratios, dict) or not ratios:
            raise InvalidData('split.ratios: must be an object like {"train": 0.9, "test": 0.1}')
        for name, ratio in ratios.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise InvalidData(f"split.ratios: {name!r} is not a valid split name")
            if isinstance(ratio, bool) or not isinstance(ratio, int | float) or ratio <= 0:
                raise InvalidData(f"split.ratios.{name}: must be a positive number, got {ratio!r}")
        by = value.get("by", "trajectory")
        if by not in SPLIT_BY:
            raise InvalidData(f"split.by: must be one of {', '.join(SPLIT_BY)}, got {by!r}")
        seed = value.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise InvalidData(f"split.seed: must be an integer, got {seed!r}")
        total = float(sum(ratios.values()))
        return cls(ratios=tuple((name, ratios[name] / total) for name in ratios), by=by, seed=seed)

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.ratios]

    def describe(self) -> dict[str, Any]:
        return {"by": self.by, "seed": self.seed, "ratios": dict(self.ratios)}

    def assign(self, trajectories: QuerySet[Trajectory]) -> dict[str, str]:
        """The split of every trajectory, by uid (one small row per trajectory in memory)."""
        rows = list(trajectories.order_by("uid").values_list("uid", "task__uid"))
        apps_of = apps_by_uid(trajectories) if self.by == "app" else {}
        group_of_app = _app_groups(apps_of.values())
        groups: dict[str, list[str]] = {}
        for uid, task_uid in rows:
            if self.by == "task":
                key = task_uid
            elif self.by == "app":
                key = group_of_app[apps_of[str(uid)][0]]
            else:
                key = str(uid)
            groups.setdefault(key, []).append(str(uid))
        keys = sorted(groups)
        random.Random(self.seed).shuffle(keys)
        total = sum(len(members) for members in groups.values())
        # Fill the splits in order up to their cumulative share, whole groups at a time.
        bounds, running = [], 0.0
        for _, ratio in self.ratios:
            running += ratio
            bounds.append(running * total)
        assignment: dict[str, str] = {}
        placed, position = 0, 0
        for key in keys:
            members = groups[key]
            while position < len(bounds) - 1 and placed + len(members) / 2 > bounds[position]:
                position += 1
            for uid in members:
                assignment[uid] = self.ratios[position][0]
            placed += len(members)
        return assignment


def _app_groups(app_lists: Iterable[list[str] | None]) -> dict[str, str]:
    """Each app's group: apps used together by some trajectory, transitively, are one group,
    named by its first app in sorted order."""
    parent: dict[str, str] = {}

    def root(app: str) -> str:
        while parent[app] != app:
            parent[app] = parent[parent[app]]
            app = parent[app]
        return app

    for apps in app_lists:
        for app in apps or []:
            parent.setdefault(app, app)
        for app in (apps or [])[1:]:
            first, other = root(apps[0]), root(app)
            if first != other:
                parent[max(first, other)] = min(first, other)
    return {app: root(app) for app in parent}


class ExportRun:
    """What every dataset export does around its own records: the split of each trajectory,
    the counts per split and per app its card shows, the manifest's head, and progress
    reported every 20 trajectories and once the folder is complete."""

    def __init__(
        self, division: Split, trajectories: QuerySet[Trajectory], progress: Progress | None
    ):
        self.division = division
        self.assignment = division.assign(trajectories)
        self.total = len(self.assignment)
        self.progress = progress
        self.done = 0
        self.per_split: dict[str, Counter] = {name: Counter() for name in division.names}
        self.apps: dict[str, Counter] = {}

    def records(self, records: Iterable[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
        """(split, record) of each native record; progress is reported once a record's turn
        is over."""
        for record in records:
            yield self.assignment[record["id"]], record
            self.done += 1
            if self.progress and self.done % 20 == 0:
                self.progress(self.done, self.total)

    def count_apps(self, record: dict[str, Any], split: str) -> None:
        for app in record_apps(record):
            self.apps.setdefault(app, Counter())[split] += 1

    def head(self, options: dict[str, Any], filters: dict[str, Any] | None) -> dict[str, Any]:
        """The manifest's options, filter and split."""
        return {"options": options, "filter": filters or {}, "split": self.division.describe()}

    def finished(self) -> None:
        if self.progress:
            self.progress(self.done, self.total)


# ---------------------------------------------------------------- writer


@dataclass
class _SplitFile:
    handle: IO[bytes]
    digest: Any = field(default_factory=hashlib.sha256)
    records: int = 0


class _HashedFile:
    """A file of an export that hashes what goes through it; closing it lists its sha256."""

    def __init__(self, raw: IO[bytes], name: str, sums: IO[str]):
        self.raw, self.name, self._sums = raw, name, sums
        self._digest = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self._digest.update(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()

    def close(self) -> None:
        if not self.raw.closed:
            self.raw.close()
            self._sums.write(f"{self._digest.hexdigest()} {self.name}\n")


class DatasetWriter:
    """Writes one export folder atomically: JSONL per split, images, manifest and card."""

    def __init__(
        self,
        dest: Path,
        fmt: str,
        schema_version: int,
        *,
        splits: Iterable[str],
        max_side: int | None = None,
        parquet: bool = False,
        apart: Iterable[str] = (),
    ):
        """``apart``: files among ``splits`` whose records have other columns than the data
        splits (``androidcontrol``'s unmapped steps): the card loads them on their own."""
        dest = Path(dest)
        if dest.exists():
            raise InvalidData(f"{dest}: already exists; choose a new folder")
        dest.parent.mkdir(parents=True, exist_ok=True)
        self.dest = dest
        self.format = fmt
        self.schema_version = schema_version
        self.max_side = max_side
        self.parquet = parquet
        self.work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))
        self._sums = open(self.work / ".sums", "w", encoding="utf-8")  # noqa: SIM115
        self._files: dict[str, _SplitFile] = {}
        self.split_names = list(splits)
        self.apart = [name for name in apart if name in self.split_names]
        self._binaries: list[_HashedFile] = []
        self.images_written = 0
        # The images written lately, by blob name: most repeats are a step's recent history.
        # Bounded, so memory stays flat; an older image is found on disk instead.
        self._recent: OrderedDict[tuple[str, str | None], str] = OrderedDict()

    def __enter__(self) -> DatasetWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.abort()

    def abort(self) -> None:
        for split_file in self._files.values():
            split_file.handle.close()
        for handle in self._binaries:
            handle.raw.close()
        self._sums.close()
        shutil.rmtree(self.work, ignore_errors=True)

    # -- data files

    def data_file(self, split: str) -> str:
        return f"{split}.jsonl"

    def write(self, split: str, record: dict[str, Any]) -> None:
        self.write_line(split, dump_line(record))

    def write_line(self, split: str, line: str) -> None:
        """A record already encoded as one JSON line (ending with a newline)."""
        split_file = self._files.get(split)
        if split_file is None:
            handle = open(self.work / self.data_file(split), "wb")  # noqa: SIM115
            split_file = self._files[split] = _SplitFile(handle)
        data = line.encode("utf-8")
        split_file.handle.write(data)
        split_file.digest.update(data)
        split_file.records += 1

    def binary(self, name: str) -> _HashedFile:
        """A data file the format lays out itself (a TFRecord shard), written through the
        handle returned and listed in the manifest with its sha256 once the handle is closed."""
        path = self.work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = _HashedFile(open(path, "wb"), name, self._sums)  # noqa: SIM115
        self._binaries.append(handle)
        return handle

    def write_text(self, name: str, text: str) -> None:
        """A small side file (e.g. dataset_info.json), listed in the manifest."""
        data = text.encode("utf-8")
        (self.work / name).parent.mkdir(parents=True, exist_ok=True)
        (self.work / name).write_bytes(data)
        self._sums.write(f"{hashlib.sha256(data).hexdigest()} {name}\n")

    # -- images

    def image(self, blob_name: str, name: str | None = None) -> str:
        """Copy a screenshot (``screens/<sha>.<ext>`` as the native record names it) once.

        Returns its path relative to the export folder: ``images/<sha>.<ext>``, or ``name``
        when the format lays images out itself. Resized to ``max_side`` when set.
        """
        key = (blob_name, name)
        known = self._recent.get(key)
        if known is not None:
            return known
        relative = self._image(blob_name, name)
        self._recent[key] = relative
        if len(self._recent) > RECENT_IMAGES:
            self._recent.popitem(last=False)
        return relative

    def _image(self, blob_name: str, name: str | None) -> str:
        file_name = blob_name.rsplit("/", 1)[1]
        relative = name or f"{IMAGES}/{file_name}"
        target = self.work / relative
        if target.exists():
            return relative
        target.parent.mkdir(parents=True, exist_ok=True)
        sha, extension = file_name.split(".")
        storage_name = blob_storage_name(sha, extension)
        if self.max_side:
            data = self._resized(storage_name, extension)
            target.write_bytes(data)
            digest = hashlib.sha256(data).hexdigest()
        else:
            _copy_blob(storage_name, target)
            digest = sha
        self._sums.write(f"{digest} {relative}\n")
        self.images_written += 1
        return relative

    def _resized(self, storage_name: str, extension: str) -> bytes:
        with default_storage.open(storage_name, "rb") as src:
            image = Image.open(src)
            image.load()
        longest = max(image.size)
        if longest > self.max_side:
            scale = self.max_side / longest
            size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
            image = image.resize(size, Image.Resampling.LANCZOS)
        out = io.BytesIO()
        kind = {"png": "PNG", "jpg": "JPEG", "webp": "WEBP"}.get(extension, "PNG")
        image.save(out, kind, **({"compress_level": 6} if kind == "PNG" else {"quality": 90}))
        return out.getvalue()

    # -- end

    def counts_per_split(self) -> dict[str, int]:
        return {
            name: self._files[name].records if name in self._files else 0
            for name in self.split_names
        }

    def finish(self, head: dict[str, Any], counts: dict[str, Any], card: str) -> dict[str, Any]:
        """Write the card and the manifest, then move the folder to its final name."""
        try:
            for name in self.split_names:
                if name not in self._files:  # an empty split is still a file: loaders expect it
                    handle = open(self.work / self.data_file(name), "wb")  # noqa: SIM115
                    self._files[name] = _SplitFile(handle)
            for split_file in self._files.values():
                split_file.handle.close()
            for handle in self._binaries:
                handle.close()
            if self.parquet:
                for name in self.split_names:
                    parquet = self.work / f"{name}.parquet"
                    write_parquet(self.work / self.data_file(name), parquet, self.work)
                    self._sums.write(f"{_sha256_file(parquet)} {parquet.name}\n")
                data = [name for name in self.split_names if name not in self.apart]
                card += card_section(data, self.apart)
            self.write_text(CARD, card)
            self._sums.close()
            self._write_manifest(head, counts)
            (self.work / ".sums").unlink()
            os.replace(self.work, self.dest)
        except BaseException:
            self.abort()
            raise
        return counts

    def _write_manifest(self, head: dict[str, Any], counts: dict[str, Any]) -> None:
        """Stream the manifest: the file list is copied line by line from the side file."""
        top = {
            "format": self.format,
            "schema_version": self.schema_version,
            "waypoint_version": waypoint_version(),
            **head,
            "counts": counts,
        }
        with open(self.work / MANIFEST, "w", encoding="utf-8") as out:
            out.write(json.dumps(top, indent=1, ensure_ascii=False, sort_keys=True)[:-2] + ",\n")
            out.write(' "files": {\n')
            entries = [
                f'  {json.dumps(self.data_file(name))}: "{self._files[name].digest.hexdigest()}"'
                for name in self.split_names
            ]
            out.write(",\n".join(entries))
            with open(self.work / ".sums", encoding="utf-8") as sums:
                for entry in sums:
                    sha, name = entry.rstrip("\n").split(" ", 1)
                    out.write(f',\n  {json.dumps(name)}: "{sha}"')
            out.write("\n }\n}\n")


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _copy_blob(name: str, target: Path) -> None:
    try:
        source = default_storage.path(name)
    except NotImplementedError:
        with default_storage.open(name, "rb") as src, open(target, "wb") as out:
            shutil.copyfileobj(src, out)
    else:
        shutil.copyfile(source, target)


# ---------------------------------------------------------------- the card


def markdown_table(header: list[str], rows: Iterable[Iterable[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def card_counts(per_split: dict[str, Counter], apps: dict[str, Counter], unit: str) -> str:
    """Counts per split and per app, as two Markdown tables."""
    parts = [
        markdown_table(["split", unit], [(name, sum(c.values())) for name, c in per_split.items()]),
        "",
        markdown_table(
            ["app", *per_split],
            [(app, *(apps[app].get(name, 0) for name in per_split)) for app in sorted(apps)],
        )
        if apps
        else "(no app recorded)",
    ]
    return "\n".join(parts)


def check_plain_options(fmt: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """The options of a format that takes only ``parquet``."""
    options = dict(options or {})
    unknown = set(options) - {"parquet"}
    if unknown:
        raise InvalidData(
            f"options: unknown option {sorted(unknown)[0]!r} for {fmt} (known: parquet)"
        )
    parquet = options.get("parquet", False)
    if not isinstance(parquet, bool):
        raise InvalidData(f"options.parquet: must be bool, got {parquet!r}")
    return {"parquet": parquet}


def check_no_options(fmt: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """The options of a format written in a dataset's own layout: none (a split aside)."""
    if options:
        raise InvalidData(
            f"options: unknown option {sorted(options)[0]!r} for {fmt} (it takes no options)"
        )
    return {}


def check_memory_graph_option(value: Any) -> int | None:
    """``memory_graph``: the version of the project's memory graph whose retrieval memory block
    each step gets (stamp-sft, androtmem); None for none."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidData(f"options.memory_graph: must be a graph version (1, 2, …), got {value!r}")
    return value


def describe_filter(filters: dict[str, Any] | None) -> str:
    if not filters:
        return "every trajectory of the project (second annotators' copies excluded)"
    return ", ".join(
        f"{key} = {json.dumps(value, ensure_ascii=False)}" for key, value in sorted(filters.items())
    )

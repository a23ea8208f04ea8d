"""AndroTMem-Bench task records read as trajectories: the inverse of the ``androtmem`` export.

The import folder holds the ground truth, one or more ``*.jsonl`` files (a task per line) or
``*.json`` files (a JSON array of tasks), as AndroTMem's scorer reads them, and the images,
found by each step's ``image_name`` relative to the folder (else to its ``images/`` folder).
A Waypoint ``androtmem`` export is such a folder with a ``manifest.json`` besides.

A task becomes a trajectory:

- ``task_id`` is the trajectory's id when it is a UUID (a Waypoint export), else a stable id
  made from it, and the exporter writes the ``task_id`` back; ``instruction_en`` (else
  ``instruction``) is the goal, ``primary_intent`` the intent (a name outside Waypoint's eight
  is kept in the metadata), ``apps``, ``gold_answer``, ``grading_rule`` and
  ``memory_targets`` are the task's;
- each step has one screen: its image (``width`` / ``height`` when given must be the image's)
  or, when the image is missing, a grey stand-in of that size, with the step not trainable and
  listed in ``metadata["androtmem"]["missing_screenshots"]``;
- ``actionForm`` becomes the canonical action (every original kept, in order, in
  ``metadata["androtmem"]["actions"]``): ``tap`` / ``long_press`` at ``point`` (else the bbox's
  centre) with the bbox as the target's bounds; ``text`` types ``value``; ``swipe`` with a
  ``direction`` is a finger swipe that way through the screen's centre over half the screen
  (``x``/``y``/``x_end``/``y_end``, when given, are its points); ``open_app`` opens ``value``;
  ``finish`` is a ``terminate`` for the values success / failure (an empty value is success),
  else an ``answer`` with the value; ``home``, ``back``, ``wait``, ``enter``, ``key``
  (``value`` the keycode) keep their names; ``need_feedback`` is an ``answer`` with the
  request, ``capture_screen`` a ``wait`` of 0 ms (AndroTMem types Waypoint has no word for);
- ``extra_info.status`` are the step's anchors (id from ``id`` / ``uuid`` / ``status_id`` /
  ``anchor_id`` / ``node_id``, the six types; a missing type is read from a ``[Category]``
  prefix of the content), content from ``content_en`` else ``content``, description likewise;
- ``extra_info.links`` (or a step's ``links``) are the causal links into the step: the source
  is the anchor its ``source`` names, or the first anchor of the step it names; the target is
  the anchor ``target`` names, else the first anchor of the step the link is on. A step a link
  needs that has no anchor gets one (type ``state_change``, id ``step:<index>``, listed in
  ``metadata["androtmem"]["implicit_anchors"]``).

Links are kept as the dataset drew them: a task read from AndroTMem's own files is marked
(``metadata["androtmem"]["as_drawn"]``) so that its export adds no link and rewrites no
anchor, and the scorer follows the same chains; in a Waypoint export the link the exporter
added to its final step is recognised and left out (the export adds it again), so export ->
import -> export gives the same bytes.

Bad input names the file, the line (or record) and the task, and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trajectories.bounds import bounded_lines, line_too_long, load_json
from trajectories.records import ScreenRecord, StepRecord, TaskRecord, TrajectoryRecord
from trajectories.validation import InvalidData, fail, field_at, shown

from .androtmem import FORMAT, INTENT_NAMES
from .archive import read_file
from .dataset import MANIFEST
from .imported import Fields, as_uid, image_file, missing_screenshot, number, on_screen

IMAGES = "images"
STEP_KEYS = ("step_id", "id", "uuid", "uid", "node_id")
ANCHOR_KEYS = ("id", "uuid", "status_id", "anchor_id", "node_id")
ANCHOR_TYPES = ("subgoal", "state_change", "dependency", "exception", "context_info", "finish")
RELATIONS = ("prerequisite", "enables", "result_of", "blocks")
ALIASES = {
    "click": "tap",
    "input_text": "text",
    "type": "text",
    "terminate": "finish",
    "finish_task": "finish",
}
DIRECTIONS = ("up", "down", "left", "right")
WAIT_MS = 1000  # AndroTMem's wait has no duration
INTENTS = {name.lower(): value for value, name in INTENT_NAMES.items()}
INTENTS.update({value: value for value in INTENT_NAMES})


# ---------------------------------------------------------------- files


def data_files(folder: Path) -> list[str]:
    """The ground-truth files of an import folder: ``*.jsonl`` and ``*.json`` at its top."""
    names = sorted(
        p.name
        for p in folder.iterdir()
        if p.is_file() and p.suffix in (".jsonl", ".json") and p.name != MANIFEST
    )
    if not names:
        raise InvalidData(
            "no AndroTMem task records: looked for *.jsonl and *.json files in the import folder"
        )
    return names


def _is_array(path: Path) -> bool:
    with open(path, "rb") as handle:
        head = handle.read(64).lstrip()
    return head.startswith((b"[", b"\xef\xbb\xbf["))


def task_objects(folder: Path) -> Iterator[tuple[str, str, Any]]:
    """(file, where, parsed task) for every task of every ground-truth file, in order; a JSONL
    file is read a line at a time."""
    for name in data_files(folder):
        path = folder / name
        if _is_array(path):
            raw = read_file(folder, name, name)
            try:
                tasks = load_json(raw, name)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise InvalidData(f"{name}: invalid JSON ({exc})") from None
            if not isinstance(tasks, list):
                raise InvalidData(f"{name}: must be a JSON array of tasks")
            for number_, task in enumerate(tasks, start=1):
                yield name, f"{name} task {number_}:", task
            continue
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            for line_number, line in bounded_lines(handle):
                where = f"{name} line {line_number}:"
                if line is None:
                    raise fail(where, f"line {line_too_long()}")
                if not line.strip():
                    continue
                try:
                    yield name, where, load_json(line.encode("utf-8", "surrogateescape"), where)
                except json.JSONDecodeError as exc:
                    raise fail(where, f"invalid JSON at column {exc.colno}: {exc.msg}") from None
                except UnicodeDecodeError as exc:
                    raise fail(where, f"not UTF-8 text ({exc.reason})") from None


def count_tasks(folder: Path) -> int:
    """How many tasks :func:`read_androtmem` yields (each file parsed, no image read)."""
    return sum(1 for _ in task_objects(Path(folder)))


def is_waypoint_export(folder: Path) -> bool:
    """Whether the folder is Waypoint's own ``androtmem`` export (its manifest says so)."""
    path = folder / MANIFEST
    if not path.is_file():
        return False
    try:
        manifest = load_json(read_file(folder, MANIFEST, MANIFEST), MANIFEST)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == FORMAT


def read_androtmem(
    folder: Path, checked: dict[str, Any] | None = None
) -> Iterator[tuple[str, TrajectoryRecord]]:
    """Yield (where, record) for every task of an AndroTMem import folder."""
    folder = Path(folder)
    checked = {} if checked is None else checked
    as_drawn = not is_waypoint_export(folder)
    for name, where, obj in task_objects(folder):
        task_id = str(Fields(obj, where).get("task_id", (str, int)))
        where = f"{where.rstrip(':')} (task {shown(task_id)}):"
        reader = _Task(folder, Fields(obj, where), task_id, checked, as_drawn)
        reader.meta["file"] = name
        yield where, reader.record()


# ---------------------------------------------------------------- one task


class _Task:
    def __init__(
        self, folder: Path, task: Fields, task_id: str, checked: dict[str, Any], as_drawn: bool
    ):
        self.folder, self.task, self.task_id = folder, task, task_id
        self.checked, self.as_drawn = checked, as_drawn
        self.meta: dict[str, Any] = {"actions": []}
        self.anchors: list[dict[str, Any]] = []
        self.first_anchor: dict[int, str] = {}  # step index -> its first anchor's id
        self.aliases: dict[str, int] = {}  # step aliases -> step index

    def record(self) -> TrajectoryRecord:
        task = self.task
        raw_steps = task.get("steps", list)
        steps_at = task.at("steps")
        parsed = [Fields(s, f"{steps_at}[{i}]") for i, s in enumerate(raw_steps)]
        if not parsed:
            raise fail(steps_at, "a task needs at least one step")
        order = [s.get("step_index", int) for s in parsed]
        if order != list(range(len(order))):
            raise fail(
                steps_at,
                f"step_index must run 0, 1, 2, ... in order, got {shown(str(order[:8]))}",
            )
        for index, step in enumerate(parsed):
            self.aliases[str(index)] = index
            for key in STEP_KEYS:
                value = step.obj.get(key)
                if value is not None:
                    self.aliases[str(value)] = index
        screens, steps = [], []
        for index, step in enumerate(parsed):
            screen, trainable = self._screen(step, index)
            screens.append(screen)
            action, target = self._action(step, screen, index)
            steps.append(
                StepRecord(
                    index=index,
                    screen=index,
                    action=action,
                    target=target,
                    summary=step.get("summary", str, ""),
                    trainable=trainable,
                )
            )
        for index, step in enumerate(parsed):
            self._read_anchors(step, index)
        links = self._links(parsed)
        return TrajectoryRecord(
            uid=as_uid(self.task_id, FORMAT),
            task=self._task_record(),
            screens=screens,
            steps=steps,
            device={"width": screens[0].width, "height": screens[0].height},
            source="imported",
            metadata=self._metadata(),
            memory_targets=self._memory_targets(len(steps)),
            anchors=self.anchors,
            anchor_links=links,
        )

    # ------------------------------------------------------------ task fields

    def _task_record(self) -> TaskRecord:
        task = self.task
        intent_name = task.get("primary_intent", str, "")
        intent = INTENTS.get(intent_name.lower(), "") if intent_name else ""
        if intent_name and not intent:
            self.meta["primary_intent"] = intent_name
        apps = task.get("apps", list, [])
        if not all(isinstance(app, str) for app in apps):
            raise fail(task.at("apps"), "must be a list of strings")
        return TaskRecord(
            uid=task.text("task_uid", default=f"{FORMAT}:{self.task_id}"),
            goal=task.text("instruction_en", "instruction"),
            apps=apps,
            intent=intent,
            gold_answer=task.get("gold_answer", str, ""),
            grading_rule=task.get("grading_rule", str, "exact"),
        )

    def _metadata(self) -> dict[str, Any]:
        task = self.task
        meta = dict(self.meta)
        if as_uid(self.task_id, FORMAT) != self.task_id:
            meta["task_id"] = self.task_id
        if self.as_drawn:
            meta["as_drawn"] = True
        out: dict[str, Any] = {FORMAT: meta}
        template = task.get("task_template", str, "")
        if template and template != task.obj.get("task_uid"):
            out["virtual_task"] = template
        seed = task.obj.get("seed")
        if seed is not None:
            out["virtual_device"] = {"seed": seed}
        return out

    def _memory_targets(self, step_count: int) -> list[dict[str, Any]]:
        out = []
        at = self.task.at("memory_targets")
        for i, item in enumerate(self.task.get("memory_targets", list, [])):
            m = Fields(item, f"{at}[{i}]")
            out.append(
                {
                    "key": m.get("key", str),
                    "value": m.get("value", str, ""),
                    "encode_step": m.get("encode_step", int),
                    "retrieve_steps": m.get("retrieve_steps", list, []),
                }
            )
        return out

    # ------------------------------------------------------------ screens

    def _screen(self, step: Fields, index: int) -> tuple[ScreenRecord, bool]:
        name = step.get("image_name", str, "")
        width, height = step.get("width", int, 0), step.get("height", int, 0)
        found = next(
            (
                candidate
                for candidate in (name, f"{IMAGES}/{name}")
                if name and _is_file(self.folder, candidate)
            ),
            None,
        )
        if found is None:
            if not (width and height):
                raise fail(
                    step.at("image_name"),
                    f"image {shown(name)} is missing and the step gives no width and height",
                )
            self.meta.setdefault("missing_screenshots", []).append(index)
            shot = missing_screenshot(width, height)
            return ScreenRecord(screenshot=shot, width=width, height=height), False
        ref, info = image_file(self.folder, found, step.at("image_name"), self.checked)
        if (width or height) and (width, height) != (info.width, info.height):
            raise fail(
                step.where,
                f"declared size {width}x{height} but {found} is {info.width}x{info.height}",
            )
        screen = ScreenRecord(
            screenshot=ref,
            screenshot_type=info.content_type,
            width=info.width,
            height=info.height,
        )
        return screen, True

    # ------------------------------------------------------------ actions

    def _action(
        self, step: Fields, screen: ScreenRecord, index: int
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        form = Fields(step.get("actionForm", dict), step.at("actionForm"))
        self.meta["actions"].append(form.obj)
        raw = form.get("action", str)
        kind = ALIASES.get(raw.strip().lower(), raw.strip().lower())
        value = form.obj.get("value")
        value = "" if value is None else value
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise fail(form.at("value"), f"must be a string, got {shown(value)}")
        value = str(value)
        width, height = screen.width, screen.height
        if kind in ("tap", "long_press"):
            return self._press(form, kind, width, height)
        if kind in ("swipe", "swipe_two_points"):
            return self._swipe(form, width, height), None
        if kind == "text":
            if not value:
                raise fail(form.at("value"), "a text action needs the text typed")
            return {"type": "type", "text": value}, None
        if kind == "open_app":
            if not value:
                raise fail(form.at("value"), "an open_app action needs the app")
            action = {"type": "open_app", "package": value}
            if " " in value or "." not in value:  # a name, not a package
                action["app_label"] = value
            return action, None
        if kind == "finish":
            if value.lower() in ("", "success", "failure"):
                return {"type": "terminate", "status": value.lower() or "success"}, None
            return {"type": "answer", "text": value}, None
        if kind == "need_feedback":
            if not value:
                raise fail(form.at("value"), "a need_feedback action needs its request")
            return {"type": "answer", "text": value}, None
        if kind in ("home", "back", "enter"):
            return {"type": kind}, None
        if kind == "wait":
            return {"type": "wait", "duration_ms": WAIT_MS}, None
        if kind == "capture_screen":
            return {"type": "wait", "duration_ms": 0}, None
        if kind == "key":
            if not value:
                raise fail(form.at("value"), "a key action needs the keycode")
            return {"type": "key", "keycode": value}, None
        raise fail(form.at("action"), f"unknown AndroTMem action {shown(raw)}")

    def _press(
        self, form: Fields, kind: str, width: int, height: int
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        box = form.obj.get("bbox")
        bounds = None
        if box is not None:
            if not isinstance(box, list) or len(box) != 4:
                raise fail(form.at("bbox"), f"must be [x_min, y_min, x_max, y_max], got {box!r}")
            x1, y1, x2, y2 = (
                int(round(number(v, f"{form.at('bbox')}[{i}]"))) for i, v in enumerate(box)
            )
            if x2 < x1 or y2 < y1:
                raise fail(form.at("bbox"), f"must have x_max >= x_min and y_max >= y_min: {box}")
            bounds = [x1, y1, x2, y2]
        point = form.obj.get("point")
        if point is not None:
            if not isinstance(point, list) or len(point) != 2:
                raise fail(form.at("point"), f"must be [x, y], got {shown(point)}")
            x, y = (number(v, f"{form.at('point')}[{i}]") for i, v in enumerate(point))
        elif bounds is not None:
            x, y = (bounds[0] + bounds[2]) / 2, (bounds[1] + bounds[3]) / 2
        elif "x" in form.obj and "y" in form.obj:
            x, y = number(form.obj["x"], form.at("x")), number(form.obj["y"], form.at("y"))
        else:
            raise fail(form.at("bbox"), f"a {kind} needs a bbox or a point")
        action = {
            "type": "click" if kind == "tap" else "long_press",
            "x": on_screen(x, width),
            "y": on_screen(y, height),
        }
        degenerate = bounds is None or (bounds[0] == bounds[2] and bounds[1] == bounds[3])
        return action, None if degenerate else {"bounds": bounds}

    def _swipe(self, form: Fields, width: int, height: int) -> dict[str, Any]:
        if all(isinstance(form.obj.get(k), int | float) for k in ("x", "y", "x_end", "y_end")):
            x, y, x2, y2 = (number(form.obj[k], form.at(k)) for k in ("x", "y", "x_end", "y_end"))
            return {
                "type": "swipe",
                "x": on_screen(x, width),
                "y": on_screen(y, height),
                "x2": on_screen(x2, width),
                "y2": on_screen(y2, height),
            }
        direction = str(form.obj.get("direction") or "").strip().lower()
        if direction not in DIRECTIONS:
            raise fail(
                form.at("direction"),
                f"a swipe needs a direction (up, down, left, right), got {shown(direction)}",
            )
        cx, cy, dx, dy = width // 2, height // 2, width // 4, height // 4
        start, end = {
            "up": ((cx, cy + dy), (cx, cy - dy)),
            "down": ((cx, cy - dy), (cx, cy + dy)),
            "left": ((cx + dx, cy), (cx - dx, cy)),
            "right": ((cx - dx, cy), (cx + dx, cy)),
        }[direction]
        return {"type": "swipe", "x": start[0], "y": start[1], "x2": end[0], "y2": end[1]}

    # ------------------------------------------------------------ anchors and links

    def _read_anchors(self, step: Fields, index: int) -> None:
        extra = Fields(step.get("extra_info", dict, {}), step.at("extra_info"))
        at = extra.at("status")
        for k, item in enumerate(extra.get("status", list, [])):
            a = Fields(item, f"{at}[{k}]")
            key = next((str(a.obj[k2]) for k2 in ANCHOR_KEYS if a.obj.get(k2) is not None), "")
            key = key or f"{index}-{k}"
            if any(anchor["id"] == key for anchor in self.anchors):
                raise fail(a.at("id"), f"anchor id {shown(key)} is used twice in this task")
            content = a.text("content_en", "content")
            kind = a.get("type", str, "") or _type_in(content)
            if kind not in ANCHOR_TYPES:
                raise fail(
                    a.at("type"),
                    f"unknown anchor type {shown(kind)} (known: {', '.join(ANCHOR_TYPES)})",
                )
            evidence = a.obj.get("evidence")
            if evidence in (None, ""):
                evidence = {}
            elif not isinstance(evidence, dict):
                evidence = {"evidence": evidence}
            originals = {
                name: a.obj[name]
                for name in ("content", "description")
                if isinstance(a.obj.get(name), str)
                and a.obj[name] != a.obj.get(f"{name}_en")
                and a.obj.get(f"{name}_en")
            }
            if originals:
                self.meta.setdefault("anchor_texts", {})[key] = originals
            self.anchors.append(
                {
                    "id": key,
                    "step": index,
                    "type": kind,
                    "content": content,
                    "description": a.text("description_en", "description", default=""),
                    "evidence": evidence,
                }
            )
            self.first_anchor.setdefault(index, key)

    def _anchor_of_step(self, index: int) -> str:
        """The first anchor of a step, made when a link needs one there."""
        if index not in self.first_anchor:
            key = f"step:{index}"
            self.anchors.append(
                {
                    "id": key,
                    "step": index,
                    "type": "state_change",
                    "content": f"step {index}",
                    "description": "",
                    "evidence": {},
                }
            )
            self.first_anchor[index] = key
            self.meta.setdefault("implicit_anchors", []).append(key)
        return self.first_anchor[index]

    def _links(self, steps: list[Fields]) -> list[dict[str, Any]]:
        anchor_ids = {a["id"] for a in self.anchors}
        step_of = {a["id"]: a["step"] for a in self.anchors}
        finish = [a for a in self.anchors if a["type"] == "finish"]
        last_finish = max(finish, key=lambda a: a["step"])["id"] if finish else None
        out: dict[tuple[str, str, str], dict[str, Any]] = {}
        for index, step in enumerate(steps):
            extra = step.obj.get("extra_info") or {}
            links = step.obj.get("links")
            at = step.at("links")
            if links is None:
                links, at = extra.get("links", []), field_at(step.at("extra_info"), "links")
            if not isinstance(links, list):
                raise fail(at, "must be a list of links")
            for k, item in enumerate(links):
                link = Fields(item, f"{at}[{k}]")
                source = link.get("source", (str, int))
                relation = link.get("type", str)
                if relation not in RELATIONS:
                    raise fail(
                        link.at("type"),
                        f"unknown link type {shown(relation)} (known: {', '.join(RELATIONS)})",
                    )
                critical = link.obj.get("is_critical") is True
                target = link.obj.get("target")
                if (
                    not self.as_drawn
                    and index not in self.first_anchor
                    and target is not None
                    and self.aliases.get(str(target)) == index
                    and str(source) == last_finish
                    and relation == "prerequisite"
                    and critical
                ):
                    continue  # the exporter's link from the finish anchor: it adds it again
                if str(source) in anchor_ids:
                    source_id = str(source)
                elif str(source) in self.aliases:
                    source_id = self._anchor_of_step(self.aliases[str(source)])
                else:
                    raise fail(
                        link.at("source"),
                        f"{shown(str(source))} names no step or anchor of this task",
                    )
                if target is not None and str(target) in anchor_ids:
                    target_id = str(target)
                    if step_of[target_id] != index:
                        raise fail(
                            link.at("target"),
                            f"anchor {shown(str(target))} is on step {step_of[target_id]}, "
                            f"not on step {index} where the link is",
                        )
                else:
                    target_id = self._anchor_of_step(index)
                if source_id == target_id:
                    raise fail(link.where, f"anchor {shown(source_id)} links to itself")
                triple = (source_id, target_id, relation)
                if triple in out:
                    out[triple]["critical"] = out[triple]["critical"] or critical
                    continue
                out[triple] = {
                    "source": source_id,
                    "target": target_id,
                    "relation": relation,
                    "critical": critical,
                }
        return list(out.values())


def _type_in(content: str) -> str:
    """The anchor type a ``[Category] event`` content names (``[State Change]`` ->
    ``state_change``), else ``""``."""
    if content.startswith("[") and "]" in content:
        return content[1 : content.index("]")].strip().lower().replace(" ", "_")
    return ""


def _is_file(folder: Path, name: str) -> bool:
    try:
        path = (folder / name).resolve()
        path.relative_to(folder.resolve())
    except (ValueError, OSError):
        return False
    return path.is_file()

"""The true page of a virtual app's screen, and how often ``locate`` finds it.

Each virtual app (``fixtures/virtual_apps/<app>/index.html``) renders one view at a time; the
view is what a page *is*. The markers below are read off each app's ``render()``: an id only
that view renders. They are the answer key of the measurement, never used by the graph.

The measurement (:func:`locate_accuracy`): recordings of the virtual device are split in two;
each app's graph is built from the first part, then every app screen of the second part is
located on it. A screen is placed right when its node's members are mostly of the screen's true
page, or when no node takes it and the graph has no member of that page (a page the graph has
never seen is no node).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from graphs.appkg import AppGraphLocator, TrajectoryInput, build_app_graph
from trajectories.uixml import UITree, parse_ui_xml

# (package, [(view, ids any of which marks it)], view when none does), first match wins.
VIEWS: dict[str, tuple[list[tuple[str, tuple[str, ...]]], str]] = {
    "com.waypoint.notes": ([("edit", ("save_note",)), ("view", ("edit_note",))], "list"),
    "com.waypoint.chatter": ([("thread", ("thread", "message_input"))], "conversations"),
    "com.waypoint.megamart": ([("product", ("buy_now",))], "home"),
    "com.waypoint.shopmate": ([("product", ("add_to_cart",)), ("results", ("nav_back",))], "home"),
    "com.waypoint.answers": ([("task", ("answer",))], "tasks"),
    "com.waypoint.freshcart": (
        [
            ("product", ("add_to_cart",)),
            ("orders", ("tab_orders*",)),
            ("account", ("tab_account*",)),
        ],
        "home",
    ),
}


def _ids(tree: UITree) -> set[str]:
    """Short resource-ids; a selected tab also as ``<id>*``."""
    found = set()
    for el in tree.elements:
        if el.resource_id:
            name = el.resource_id.rsplit("/", 1)[-1]
            found.add(name)
            if el.selected:
                found.add(name + "*")
    return found


def true_page(package: str, xml: bytes | str | None) -> str | None:
    """``package:view`` of a screen of a scored app; None for other apps (the launcher)."""
    if package not in VIEWS or not xml:
        return None
    rules, otherwise = VIEWS[package]
    ids = _ids(parse_ui_xml(xml))
    for view, markers in rules:
        if ids & set(markers):
            return f"{package}:{view}"
    return f"{package}:{otherwise}"


@dataclass
class AppScore:
    screens: int = 0
    right: int = 0
    unmatched: int = 0
    wrong: list[tuple[str, str]] = field(default_factory=list)  # (true page, node's page)

    @property
    def share(self) -> float:
        return self.right / self.screens if self.screens else 1.0


def locate_accuracy(
    built_from: Iterable[TrajectoryInput],
    located: Iterable[TrajectoryInput],
    with_xml: bool = True,
) -> dict[str, AppScore]:
    """Per app: build the graph from ``built_from``, locate each app screen of ``located`` (by
    its screenshot alone unless ``with_xml``)."""
    built_from, located = list(built_from), list(located)
    pages: dict[tuple[str, int], str | None] = {}
    for t in built_from:
        for i, s in enumerate(t.screens):
            pages[(t.key, i)] = true_page(s.package, s.ui_xml)
    apps = sorted({p.split(":")[0] for p in pages.values() if p})
    scores: dict[str, AppScore] = {}
    for app in apps:
        graph = build_app_graph(app, built_from)
        node_page: dict[str, str] = {}
        for node in graph.nodes:
            votes = Counter(pages[(m.trajectory, m.step)] for m in node.members)
            if votes:
                node_page[node.id] = votes.most_common(1)[0][0]
        known = set(node_page.values())
        locator = AppGraphLocator(graph)
        score = scores[app] = AppScore()
        for t in located:
            for s in t.screens:
                page = true_page(s.package, s.ui_xml)
                if page is None or not page.startswith(app + ":"):
                    continue
                score.screens += 1
                where = locator.locate(s.screenshot, s.ui_xml if with_xml else None)
                if where.node is None:
                    score.unmatched += 1
                    if page not in known:
                        score.right += 1
                    else:
                        score.wrong.append((page, "(none)"))
                elif node_page[where.node.id] == page:
                    score.right += 1
                else:
                    score.wrong.append((page, node_page[where.node.id]))
    return scores


def overall(scores: dict[str, AppScore]) -> tuple[int, int]:
    """(screens placed right, screens) over every app."""
    return sum(s.right for s in scores.values()), sum(s.screens for s in scores.values())


def record_scenarios(names: Iterable[str], serial: str, adb: str, project, user) -> list:
    """The reference recordings' scenarios (``tests/annotate/reference_recordings/record.py``)
    recorded again on the device, screenshots and all, through Waypoint's recording services."""
    import random

    from devices.services import (
        do_finish_recording,
        do_release_device,
        do_start_recording,
        do_take_device,
    )
    from tests.annotate.reference_recordings.record import SCENARIOS, Person
    from trajectories.records import TaskRecord
    from trajectories.services import get_or_create_task

    recorded = []
    for name in names:
        scenario, seed, goal = SCENARIOS[name]
        task = get_or_create_task(project, TaskRecord(uid=name, goal=goal))
        lease = do_take_device(serial, adb, user)
        trajectory = do_start_recording(lease, task, user, reset_seed=seed)
        answer = scenario(Person(trajectory, user, random.Random(seed)))
        do_finish_recording(trajectory, user, answer=answer)
        do_release_device(serial, user)
        recorded.append(trajectory)
    return recorded


def inputs_of(trajectories) -> list[TrajectoryInput]:
    """Every screen of the trajectories with its screenshot and XML (all apps), and its look
    computed once (each graph built from them would decode every screenshot again)."""
    from graphs.appkg import ScreenInput, StepInput
    from graphs.embedders import image_signature
    from trajectories.blobs import read_blob
    from trajectories.models import Step

    found = []
    for trajectory in trajectories:
        steps = list(
            Step.objects.filter(trajectory=trajectory)
            .select_related("screen__screenshot", "screen__ui_xml")
            .order_by("index")
        )
        trajectory.refresh_from_db()
        screens = [s.screen for s in steps] + [trajectory.final_screen]
        found.append(
            TrajectoryInput(
                key=str(trajectory.uid),
                screens=[
                    ScreenInput(
                        sha256=s.screenshot_id,
                        package=s.package,
                        activity=s.activity,
                        ui_xml=read_blob(s.ui_xml) if s.ui_xml_id else None,
                        screenshot=(png := read_blob(s.screenshot)),
                        look=image_signature(png),
                    )
                    for s in screens
                ],
                steps=[
                    StepInput(s.index, s.action_type, s.action, s.target, s.summary) for s in steps
                ],
            )
        )
    return found

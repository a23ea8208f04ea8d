"""The walk: an exploration job leases its device and maps the app, episode by episode.

An *episode* is one trajectory (source ``exploration``): reset the apps to the seed (the
recording's own reset), open the app, follow the known path to the state chosen to explore
next, then act on actions not tried yet, state after state, until the state has nothing left
to try, the app is left, or the episode is long enough. Each action's result is placed on a
state by the app graph's node matching (:class:`graphs.appkg.StatePlacer`); a screen no state
takes is a new state, with its candidates (``explore.elements``) to try.

Which state next: ``dfs`` stays where it is while there is something to try there (and goes
back when not), else goes to the state found last that has something left; ``bfs`` goes to
the shallowest such state; ``llm`` is ``dfs`` with the model choosing the action (and writing
the words, ``explore.llm``).

The frontier is saved after every episode; a stop ends the episode under way without saving
it (its trajectory stays, interrupted), so a resumed exploration walks exactly the episodes an
unstopped one would. Nothing here reads the virtual device's ``waypoint`` commands: the walk
sees screenshots and XML only (the reset to the seed is the recording's).
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils import timezone

from devices.models import Lease
from devices.services import DeviceUnavailable, LeaseConflict, do_heartbeat
from devices.services.adb import DEVICE_ERRORS
from devices.services.leases import do_release_device, do_take_device
from devices.services.recording import (
    Connected,
    DeviceGone,
    RecordingError,
    connect,
    do_end_recording,
    do_interrupt,
    do_start_recording,
    record_step,
)
from graphs.appkg import AppGraphParams, ScreenInput, StatePlacer
from graphs.appkg_jobs import do_start_app_graph
from trajectories.blobs import read_blob
from trajectories.models import Blob, Job, Screen, Source, Status, Trajectory
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task
from trajectories.uixml import UITree, UIXmlError, parse_ui_xml
from trajectories.validation import InvalidData

from .describe import describe_effect, describe_state
from .elements import BACK_KEY, DEFAULT_DENY, Candidate, candidates, locate
from .models import DenyList, Exploration, ExplorationStatus, Strategy

log = logging.getLogger(__name__)

# The graph's node matching with a stricter structure threshold: two tabs sharing a header and
# a tab bar (FreshCart's Orders and Account, 0.85 alike) are two states. The graph the walk
# becomes is built with the same parameters, so its nodes are the states the walk knew.
PARAMS = AppGraphParams(structure_threshold=0.9)
MAX_EPISODE_STEPS = 40  # an episode this long ends: the next starts from a fresh app
TODO, DONE, REFUSED, GONE = "todo", "done", "refused", "gone"
LEASE_GRACE_S = 5  # past a lost worker's lease's expiry, before its device is given up
LEASE_POLL_S = 1


class Stopped(Exception):
    """Someone asked the exploration to stop."""


class OutOfBudget(Exception):
    """The exploration spent its budget."""


# ------------------------------------------------------------------------------- the frontier


@dataclass
class Frontier:
    """What the walk knows: states (with what is left to try), transitions, steps spent."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    episodes: list[str] = field(default_factory=list)
    steps: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Frontier:
        data = copy.deepcopy(data)
        return cls(
            nodes=list(data.get("nodes", [])),
            edges=list(data.get("edges", [])),
            episodes=list(data.get("episodes", [])),
            steps=int(data.get("steps", 0)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "edges": self.edges,
            "episodes": self.episodes,
            "steps": self.steps,
        }

    def node(self, node_id: str) -> dict[str, Any] | None:
        return next((n for n in self.nodes if n["id"] == node_id), None)

    def todo(self, node: dict[str, Any]) -> list[dict[str, Any]]:
        return [c for c in node["candidates"] if c["status"] == TODO]

    @property
    def size(self) -> int:
        """Actions still to try, over every state."""
        return sum(len(self.todo(n)) for n in self.nodes)

    @property
    def transitions(self) -> int:
        return len({(e["source"], e["target"], e["key"]) for e in self.edges})


def _candidate(saved: dict[str, Any]) -> Candidate:
    return Candidate(**{k: v for k, v in saved.items() if k not in ("status", "missed")})


def _tree(xml: bytes | None) -> UITree | None:
    if not xml:
        return None
    try:
        return parse_ui_xml(xml)
    except UIXmlError:
        return None


# ----------------------------------------------------------------------------------- walking


class Walker:
    """One exploration's walk on a connected, leased device."""

    def __init__(
        self,
        exploration: Exploration,
        conn: Connected,
        lease,
        *,
        chooser=None,
        observer=None,
        deadline: float | None = None,
    ):
        self.x = exploration
        self.conn = conn
        self.lease = lease
        self.chooser = chooser  # the model (explore.llm.ModelWriter) for --strategy llm
        self.observer = observer  # called after every step (bench scoring); never steers
        self.deadline = deadline
        self.frontier = Frontier.from_dict(exploration.frontier or {})
        self.placer = StatePlacer(exploration.app, PARAMS)
        deny = DenyList.objects.filter(project=exploration.project, app=exploration.app).first()
        self.deny = [*DEFAULT_DENY, *(deny.entries if deny else [])]
        self.allow = list(exploration.allow or [])
        self.task = get_or_create_task(
            exploration.project,
            TaskRecord(
                uid=f"exploration-{exploration.pk}",
                goal=f"Explore {exploration.app}: reach every page and try every action",
                apps=[exploration.app],
            ),
        )
        self._replace_references()
        self.trajectory: Trajectory | None = None
        self.episode_steps = 0
        self.skipped: set[tuple[str, str]] = set()  # not shown in this episode: later

    # --------------------------------------------------------------- states

    def _replace_references(self) -> None:
        """Rebuild the node matching from the saved states' reference screens, in order."""
        for node in self.frontier.nodes:
            if node["id"].startswith("x:"):
                continue
            screen = self._screen_input(node["png"], node["xml"], node["package"], node["activity"])
            placed, _ = self.placer.place(screen)
            if placed != node["id"]:
                raise InvalidData(
                    f"exploration {self.x.pk}: its saved state {node['id']} no longer matches "
                    f"its reference screen (placed as {placed})"
                )

    @staticmethod
    def _screen_input(png: str, xml: str, package: str, activity: str) -> ScreenInput:
        xml_bytes = read_blob(Blob.objects.get(pk=xml)) if xml else None
        return ScreenInput(
            sha256=png,
            package=package,
            activity=activity,
            ui_xml=xml_bytes,
            screenshot=read_blob(Blob.objects.get(pk=png)),
        )

    def current(self, frontier: Frontier) -> tuple[dict[str, Any], UITree | None]:
        """The state the device shows now (a new one is added, with its candidates)."""
        screen = Screen.objects.get(pk=self.trajectory.final_screen_id)
        xml = read_blob(screen.ui_xml) if screen.ui_xml_id else None
        tree = _tree(xml)
        if screen.package != self.x.app:
            node_id = f"x:{screen.package or 'unknown'}"
            node = frontier.node(node_id)
            if node is None:
                node = {
                    "id": node_id,
                    "package": screen.package,
                    "activity": screen.activity,
                    "png": "",
                    "xml": "",
                    "depth": 0,
                    "path": [],
                    "description": f"another app: {screen.package or 'unknown'}",
                    "candidates": [],
                }
                frontier.nodes.append(node)
            return node, tree
        node_id, new = self.placer.place(
            ScreenInput(
                sha256=screen.screenshot_id,
                package=screen.package,
                activity=screen.activity,
                ui_xml=xml,
                screenshot=read_blob(screen.screenshot),
            )
        )
        node = frontier.node(node_id)
        if new or node is None:
            found = (
                candidates(tree, self.x.app, self.deny, self.allow, with_back=True) if tree else []
            )
            node = {
                "id": node_id,
                "package": screen.package,
                "activity": screen.activity,
                "png": screen.screenshot_id,
                "xml": screen.ui_xml_id or "",
                "depth": 0,
                "path": [],
                "description": describe_state(tree, screen.package),
                "candidates": [
                    {**c.to_dict(), "status": REFUSED if c.denied else TODO} for c in found
                ],
            }
            if self.chooser is not None:
                node["description"] = self.chooser.describe_state(
                    read_blob(screen.screenshot), tree, node["description"]
                )
            frontier.nodes.append(node)
        return node, tree

    # --------------------------------------------------------------- acting

    def spend(self, frontier: Frontier) -> None:
        if self.x.budget_steps is not None and frontier.steps >= self.x.budget_steps:
            raise OutOfBudget
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise OutOfBudget
        if Exploration.objects.filter(pk=self.x.pk, stop_requested=True).exists():
            raise Stopped

    def step(self, frontier: Frontier, action: dict[str, Any], summary: str) -> None:
        self.spend(frontier)
        record_step(self.trajectory, action, None, self.conn, text={"summary": summary})
        frontier.steps += 1
        self.episode_steps += 1
        if self.observer is not None:
            self.observer(self.trajectory)
        _progress(self.x, frontier)

    def start_episode(self, frontier: Frontier) -> tuple[dict[str, Any], UITree | None]:
        self.spend(frontier)
        self.trajectory = do_start_recording(
            self.lease,
            self.task,
            None,
            self.conn,
            reset_seed=self.x.seed,
            source=Source.EXPLORATION,
            recorder_name=f"explorer ({self.x.strategy})",
        )
        self.episode_steps = 0
        self.skipped = set()
        self.step(frontier, {"type": "open_app", "package": self.x.app}, f"Open {self.x.app}")
        root, tree = self.current(frontier)
        return root, tree

    def end_episode(self, frontier: Frontier) -> None:
        if self.trajectory is None:
            return
        if self.trajectory.status == Status.RECORDING:
            do_end_recording(
                self.trajectory, None, status="success", step_memory_from_environment=False
            )
        frontier.episodes.append(str(self.trajectory.uid))
        self.trajectory = None

    def try_candidate(
        self, frontier: Frontier, node: dict[str, Any], tree: UITree | None, cand: dict[str, Any]
    ) -> tuple[dict[str, Any], UITree | None]:
        """Act on a candidate of the current state, record the transition; the state after."""
        candidate = _candidate(cand)
        steps = locate(candidate, tree) if tree is not None else None
        if steps is None:
            # This visit's screen does not show it (a list that changed): tried again from a
            # fresh start, given up the second time.
            cand["missed"] = cand.get("missed", 0) + 1
            if cand["missed"] >= 2:
                cand["status"] = GONE
            self.skipped.add((node["id"], cand["key"]))
            return node, tree
        cand["status"] = DONE
        for action in steps:
            self.step(frontier, action, candidate.label)
        target, after = self.current(frontier)
        if (
            target["id"] != node["id"]
            and not target["path"]
            and target["id"] != frontier.nodes[0]["id"]
        ):
            target["depth"] = node["depth"] + 1
            target["path"] = [*node["path"], candidate.key]
        left = target["id"].startswith("x:")
        effect = describe_effect(
            tree,
            after,
            same_state=target["id"] == node["id"],
            target_description=target["description"],
            left_for=target["package"] if left else "",
        )
        instruction = candidate.label
        if self.chooser is not None:
            instruction, effect = self.chooser.describe_edge(candidate.label, effect, node, target)
        frontier.edges.append(
            {
                "source": node["id"],
                "target": target["id"],
                "key": candidate.key,
                "instruction": instruction,
                "effect": effect,
                "episode": len(frontier.episodes),
            }
        )
        return target, after

    # --------------------------------------------------------------- choosing

    def next_target(self, frontier: Frontier) -> dict[str, Any] | None:
        """The state to go to next: the one found last with something left (dfs, llm), or
        the shallowest (bfs)."""
        open_nodes = [
            n for n in frontier.nodes if frontier.todo(n) and not n["id"].startswith("x:")
        ]
        if not open_nodes:
            return None
        if self.x.strategy == Strategy.BFS:
            return min(open_nodes, key=lambda n: (n["depth"], frontier.nodes.index(n)))
        return open_nodes[-1]

    def pick(
        self, frontier: Frontier, node: dict[str, Any], tree: UITree | None
    ) -> dict[str, Any] | None:
        todo = [c for c in frontier.todo(node) if (node["id"], c["key"]) not in self.skipped]
        if not todo:
            return None
        if self.x.strategy == Strategy.BFS:
            # Breadth first: what leads elsewhere before going back.
            forward = [c for c in todo if c["key"] != BACK_KEY]
            return (forward or todo)[0]
        if self.chooser is not None and len(todo) > 1:
            return self.chooser.choose(node, todo, tree)
        return todo[0]

    # --------------------------------------------------------------- the walk

    def episode(self, frontier: Frontier) -> bool:
        """One episode; False when nothing is left to explore."""
        if not frontier.nodes:
            node, tree = self.start_episode(frontier)
        else:
            goal = self.next_target(frontier)
            if goal is None:
                return False
            node, tree = self.start_episode(frontier)
            for key in goal["path"]:  # follow the way there; stop where it goes elsewhere
                cand = next((c for c in node["candidates"] if c["key"] == key), None)
                if cand is None or tree is None:
                    break
                steps = locate(_candidate(cand), tree)
                if steps is None:
                    break
                for action in steps:
                    self.step(frontier, action, cand["label"])
                node, tree = self.current(frontier)
        while self.episode_steps < MAX_EPISODE_STEPS:
            if node["id"].startswith("x:"):
                break  # the app was left: the next episode starts it afresh
            cand = self.pick(frontier, node, tree)
            if cand is None:
                break
            node, tree = self.try_candidate(frontier, node, tree, cand)
        return True

    def walk(self) -> str:
        """Episodes until the budget is spent, nothing is left, or a stop; why it ended."""
        while True:
            working = Frontier.from_dict(self.frontier.to_dict())
            try:
                more = self.episode(working)
            except OutOfBudget:
                self.end_episode(working)
                self._save(working)
                return "budget"
            except Stopped:
                if self.trajectory is not None and self.trajectory.status == Status.RECORDING:
                    do_interrupt(
                        self.trajectory,
                        "the exploration was stopped; it resumes from the last episode",
                    )
                self.trajectory = None
                return "stopped"
            if not more:
                self.end_episode(working)
                self._save(working)
                return "explored"
            self.end_episode(working)
            self._save(working)

    def _save(self, frontier: Frontier) -> None:
        # Rebuilt from scratch by the next walk if an episode is dropped; kept as it is else.
        self.frontier = frontier
        Exploration.objects.filter(pk=self.x.pk).update(frontier=frontier.to_dict())
        _progress(self.x, frontier)


def _progress(exploration: Exploration, frontier: Frontier) -> None:
    states = sum(1 for n in frontier.nodes if not n["id"].startswith("x:"))
    Exploration.objects.filter(pk=exploration.pk).update(
        steps=frontier.steps,
        states=states,
        transitions=frontier.transitions,
        frontier_size=frontier.size,
        updated_at=timezone.now(),
    )
    if exploration.job_id and exploration.budget_steps:
        Job.objects.filter(pk=exploration.job_id).update(
            done=min(frontier.steps, exploration.budget_steps), total=exploration.budget_steps
        )


# ----------------------------------------------------------------------------------- the job


def run_exploration_job(job: Job, progress) -> dict[str, Any]:
    """The job of an exploration (a new one, or one resumed): lease, walk, release; then the
    walk's episodes become a new version of the app's knowledge graph."""
    exploration = Exploration.objects.select_related("project", "created_by").get(job=job)
    return explore(exploration)


def take_for(exploration: Exploration, user) -> Lease:
    """Lease the exploration's device. A lease its owner holds already is one a lost worker of
    this exploration left (a walk is started only on a free device): it expires within
    WAYPOINT_LEASE_SECONDS of its last renewal, so wait that long for it; another's lease is
    refused at once."""
    deadline = time.monotonic() + settings.WAYPOINT_LEASE_SECONDS + LEASE_GRACE_S
    while True:
        try:
            return do_take_device(exploration.serial, exploration.adb_server, user, exclusive=True)
        except LeaseConflict:
            own = Lease.objects.filter(
                serial=exploration.serial, holder=user, expires_at__gt=timezone.now()
            ).exists()
            if not own or time.monotonic() >= deadline:
                raise
            time.sleep(LEASE_POLL_S)


def explore(exploration: Exploration, *, observer=None) -> dict[str, Any]:
    """Walk the exploration on its device (in this process) and build its graph."""
    user = exploration.created_by
    if user is None:
        return _fail(exploration, "the exploration's owner is gone: no one can hold its device")
    Exploration.objects.filter(pk=exploration.pk).update(
        status=ExplorationStatus.RUNNING, stop_requested=False, message=""
    )
    try:
        lease = take_for(exploration, user)
    except LeaseConflict as exc:
        return _fail(exploration, str(exc))
    began = time.monotonic()
    deadline = None
    if exploration.budget_seconds is not None:
        deadline = began + max(0.0, exploration.budget_seconds - exploration.seconds)
    try:
        conn = connect(exploration.serial, exploration.adb_server or None)
        if not conn.facts.virtual and exploration.seed:
            raise DeviceUnavailable(
                f"Device {exploration.serial} is not a virtual device: its apps cannot be reset "
                "to a seed."
            )
        chooser = None
        if exploration.strategy == Strategy.LLM:
            from .llm import ModelWriter

            chooser = ModelWriter()
        walker = Walker(
            exploration, conn, lease, chooser=chooser, observer=observer, deadline=deadline
        )
        with _Renewing(exploration, user):
            ended = walker.walk()
    except (DeviceUnavailable, DeviceGone, RecordingError, *DEVICE_ERRORS) as exc:
        return _fail(exploration, f"device {exploration.serial}: {exc}")
    finally:
        do_release_device(exploration.serial, user)
        Exploration.objects.filter(pk=exploration.pk).update(
            seconds=exploration.seconds + (time.monotonic() - began)
        )
    frontier = walker.frontier
    status = ExplorationStatus.STOPPED if ended == "stopped" else ExplorationStatus.FINISHED
    message = {
        "stopped": "stopped; resume it to go on from its last episode",
        "budget": f"spent its budget of {exploration.budget_text}",
        "explored": "nothing left to try",
    }[ended]
    graph = None
    if ended != "stopped" and frontier.episodes:
        graph = do_start_app_graph(
            exploration.project,
            exploration.app,
            exploration.created_by,
            params=PARAMS.to_dict(),
            filters={"trajectories": [str(pk) for pk in frontier.episodes]},
        )
    if chooser is not None:
        message += f" ({chooser.fallbacks} model answers fell back to the XML)"
    Exploration.objects.filter(pk=exploration.pk).update(
        status=status, message=message, graph=graph
    )
    return {
        "steps": frontier.steps,
        "states": sum(1 for n in frontier.nodes if not n["id"].startswith("x:")),
        "transitions": frontier.transitions,
        "frontier": frontier.size,
        "ended": ended,
    }


def _fail(exploration: Exploration, message: str) -> dict[str, Any]:
    Exploration.objects.filter(pk=exploration.pk).update(
        status=ExplorationStatus.FAILED, message=message
    )
    raise InvalidData(message)


class _Renewing:
    """Keeps the device's lease while the walk goes on (renewed between steps' threads)."""

    def __init__(self, exploration: Exploration, user):
        import threading

        self.serial, self.user = exploration.serial, user
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, name=f"exploration-{exploration.pk}")

    def _beat(self) -> None:
        from django.conf import settings
        from django.db import connection

        try:
            while not self.stop.wait(settings.WAYPOINT_JOB_HEARTBEAT_S):
                try:
                    do_heartbeat(self.serial, self.user)
                except LeaseConflict:
                    log.warning("exploration lost its lease on %s", self.serial)
        finally:
            connection.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop.set()
        self.thread.join()

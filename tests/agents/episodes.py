"""A small episode loop for the solvers' tests: reset the device to the instance's seed, show
the agent each screen (observe: screenshot and UI XML, as a recording captures them), do what
it says (the recorder's own action code), and grade its answer as the device does.

The agent gets the Observation only; the loop alone uses the device's shell.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import adbutils

from agents.base import Agent, AgentStep, Observation
from agents.replay import Recorded, ReplayAgent
from devices.services.actions import execute_action
from devices.services.adb import DeviceFacts
from devices.services.capture import capture, wait_until_settled
from trajectories.validation import check_action

FACTS = DeviceFacts(virtual=True)


@dataclass
class Episode:
    template: str
    seed: int
    goal: str
    steps: list[AgentStep] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)  # the foreground app at each step
    screens: list[bytes] = field(default_factory=list)  # the screenshot each step was taken on
    dumps: list[str] = field(default_factory=list)  # and its UI XML
    sizes: list[tuple[int, int]] = field(default_factory=list)  # and its width and height
    answer: str | None = None
    verdict: str = "no answer"  # what `waypoint grade` says of the answer

    def story(self) -> str:
        """The episode step by step, for a failing test's message."""
        lines = [f"{self.template} at seed {self.seed}: {self.goal}"]
        for i, step in enumerate(self.steps):
            lines.append(f"  {i}: {step.action} ({step.raw_output}) memory={step.memory!r}")
        return "\n".join(lines + [f"  verdict: {self.verdict}"])


def instance(device: adbutils.AdbDevice, template_id: str) -> dict:
    tasks = json.loads(device.shell(["waypoint", "tasks"], timeout=30))
    return next(t for t in tasks if t["id"] == template_id)


def play(
    device: adbutils.AdbDevice,
    agent: Agent,
    template_id: str,
    seed: int,
    max_steps: int | None = None,
    level: int = 3,
) -> Episode:
    """The agent's episode of the template at ``seed`` and ``level``, given ``max_steps`` (by
    default the instance's own budget, else 40)."""
    device.shell(["waypoint", "reset", "--seed", str(seed), "--level", str(level)], timeout=60)
    task = instance(device, template_id)
    goal = task["instruction"]
    max_steps = max_steps or task.get("max_steps") or 40
    episode = Episode(template_id, seed, goal)
    agent.start(goal)
    for index in range(max_steps):
        shot = capture(device, FACTS, wait_until_settled(device, FACTS))
        observation = Observation(
            goal, shot.png, shot.xml, shot.width, shot.height, index, shot.package
        )
        step = agent.act(observation)
        action_type, fields = check_action(step.action)
        episode.steps.append(step)
        episode.packages.append(shot.package)
        episode.screens.append(shot.png)
        episode.dumps.append(shot.xml)
        episode.sizes.append((shot.width, shot.height))
        if action_type == "answer":
            episode.answer = fields["text"]
            grade = ["waypoint", "grade", template_id, fields["text"]]
            episode.verdict = device.shell(grade, timeout=30).strip()
            break
        if action_type == "terminate":
            episode.verdict = f"gave up: {step.raw_output}"
            break
        execute_action(device, action_type, fields, FACTS)
    return episode


def replay_of(episode: Episode) -> ReplayAgent:
    """The replay agent playing back what ``episode``'s agent did, step by step, with the
    memory it wrote, its points placed as on the screens it acted on."""
    steps = [
        Recorded(dict(step.action), step.memory, width, height)
        for step, (width, height) in zip(episode.steps, episode.sizes, strict=True)
    ]
    return ReplayAgent(steps, source=f"{episode.template}@{episode.seed}")


def record(
    lease, task, actor, agent: Agent, seed: int, max_steps: int = 40, source: str = "recorded"
):
    """The agent's episode recorded as a trajectory by the recorder (``record_step``): each
    step observes the screen the recording stored. Finishing labels its memory from the
    environment."""
    from devices.services import do_finish_recording, do_start_recording, record_step
    from trajectories.blobs import read_blob

    trajectory = do_start_recording(lease, task, actor, reset_seed=seed, source=source)
    agent.start(task.goal)
    for index in range(max_steps):
        screen = trajectory.final_screen
        observation = Observation(
            task.goal,
            read_blob(screen.screenshot),
            read_blob(screen.ui_xml).decode(),
            screen.width,
            screen.height,
            index,
            screen.package,
        )
        step = agent.act(observation)
        if step.action["type"] == "answer":
            return do_finish_recording(trajectory, actor, answer=step.action["text"])
        if step.action["type"] == "terminate":
            return do_finish_recording(trajectory, actor, status=step.action["status"])
        record_step(trajectory, step.action, actor)
    return do_finish_recording(trajectory, actor, status="failure")

"""What a trainer and the environment server say to each other, in OpenEnv's types.

Importable without Django: a trainer's machine needs only this module, ``rl.client`` and
``rl.gymnasium_env`` (and ``openenv-core``, ``gymnasium``) to drive Waypoint's devices.

- :class:`WaypointAction`: the agent's output for one step, either as an ``action`` of the
  recording's canonical schema (``{"type": "click", "x": 120, "y": 300}``, pixels of the
  screenshot) with the ``memory`` it writes, or as ``text``: a model's raw output in one of the
  ``FORMATS`` the agents already read (``mobile_use``: GUI-Owl's ``Action:`` / ``Memory:`` /
  ``<tool_call>``; AndroTMem's JSON, v1 to v3; ``waypoint``: the canonical action as JSON,
  ``{"type": ...}`` or ``{"action": {...}, "memory": "..."}``). Text that reads as no action is
  an invalid output: it costs STAMP's format reward, and the device is not touched.
- :class:`WaypointObservation`: the screen (a PNG or JPEG, base64), optionally its UI XML, the
  task's instruction and the grading rule in words; never the gold answer, the memory variables
  or a shell. ``info`` holds the reward parts given at the step and, at the end, the episode's.
- :class:`WaypointState`: the episode's facts (task instance, device, run, rewards so far, the
  trajectory it is stored as).
"""

from __future__ import annotations

from typing import Any, Literal

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field, model_validator

FORMATS = ("waypoint", "mobile_use", "androtmem-v1", "androtmem-v2", "androtmem-v3")
IMAGE_FORMATS = ("png", "jpeg")
MAX_OUTPUT_CHARS = 100_000  # a model's output, or a memory, longer than this is refused


class WaypointAction(Action):
    """One output of the agent: a canonical ``action`` (with ``memory``), or a model's ``text``
    in ``format``."""

    action: dict[str, Any] | None = Field(
        default=None, description='A canonical action, e.g. {"type": "click", "x": 120, "y": 300}'
    )
    text: str | None = Field(
        default=None,
        max_length=MAX_OUTPUT_CHARS,
        description="A model's raw output, read as `format` says",
    )
    format: Literal[FORMATS] = Field(default="waypoint", description="How `text` is written")
    memory: str = Field(
        default="",
        max_length=MAX_OUTPUT_CHARS,
        description="What the agent writes down as memory at this step (with `action`)",
    )
    thought: str = Field(default="", max_length=MAX_OUTPUT_CHARS)

    @model_validator(mode="after")
    def _one_of_action_or_text(self) -> WaypointAction:
        if (self.action is None) == (self.text is None):
            raise ValueError(
                "give the step either an action (the canonical schema) or a text (a model's "
                "output), not both and not neither"
            )
        return self


class WaypointObservation(Observation):
    """The screen the agent decides on, and what the last step earned."""

    instruction: str = Field(default="", description="The task, as a person reads it")
    rule: str = Field(default="", description="How the answer is graded, in words")
    screenshot: str = Field(default="", description="The screen, base64")
    image_format: Literal[IMAGE_FORMATS] = "png"
    xml: str | None = Field(default=None, description="Its UI XML (uiautomator), when asked")
    width: int = 0
    height: int = 0
    package: str = Field(default="", description="The app in the foreground")
    step: int = Field(default=0, description="Outputs the agent has given in this episode")
    info: dict[str, Any] = Field(
        default_factory=dict,
        description="reward: the parts given at this step; episode: the rollout's parts at the "
        "end; invalid: why the output was no action; ended: why the episode ended",
    )
    timings: dict[str, float] = Field(
        default_factory=dict, description="Milliseconds: device, server (not in the Gym info)"
    )


class WaypointState(State):
    """The episode's facts (``episode_id``: the rollout's id)."""

    template: str = ""
    seed: int | None = None
    level: int | None = None
    run: str = ""
    device: str = ""
    trajectory: int | None = Field(default=None, description="Where the rollout is stored")
    stored: bool = True
    done: bool = False
    truncated: bool = False
    rewards: list[dict[str, Any]] = Field(default_factory=list, description="Per output")
    reward: float | None = Field(default=None, description="r(τ), once the episode ended")
    parts: dict[str, float] = Field(default_factory=dict)

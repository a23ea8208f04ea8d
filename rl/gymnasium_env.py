"""Gymnasium's API over the environment server: a ``gymnasium.Env`` per session, and a vector
form over N sessions stepped at once. Importable without Django (a trainer's machine).

Observations: ``{"screenshot": uint8 (height, width, 3), "instruction": text, "step": n}`` (and
``"xml"`` with ``with_xml``), the screen size the server's devices have (``GET /info``; a
screenshot of another size is resized to it). Actions: by default the canonical schema as a
``Dict`` space (``type`` an index of ``ACTION_TYPES``; ``point`` x, y, x2, y2 as fractions of the
screen; ``text`` what is typed, answered, opened or pressed; ``memory`` what the agent writes
down), or with ``text_format`` a model's raw output as text (``mobile_use``, ``androtmem-v1``
...). ``reset(seed=)`` poses the instance of that seed (of ``task``, or of the server's task for
it); ``step()`` returns ``(obs, reward, terminated, truncated, info)`` with the reward parts in
``info["reward"]`` and the episode's in ``info["episode"]`` at its end.
"""

from __future__ import annotations

import base64
import io
import json
import string
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from copy import deepcopy
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import concatenate, iterate
from PIL import Image

from .client import WaypointEnv
from .protocol import FORMATS, WaypointAction

ACTION_TYPES = (
    "click",
    "long_press",
    "swipe",
    "type",
    "key",
    "back",
    "home",
    "enter",
    "open_app",
    "wait",
    "answer",
    "terminate",
)
MAX_SEED = 2**31 - 1
MAX_INSTRUCTION = 4_000
MAX_XML = 1_000_000
MAX_TEXT = 500
MAX_OUTPUT = 8_000
MAX_STEPS_SEEN = 10_000
LONG_PRESS_MS = 800
SWIPE_MS = 300
WAIT_MS = 1000


class AnyText(spaces.Text):
    """Text of any characters up to ``max_length`` (Gymnasium's ``Text`` admits only its
    charset; a screen's text is any Unicode). Samples are printable ASCII."""

    def __init__(self, max_length: int, seed: int | None = None) -> None:
        super().__init__(max_length, min_length=0, charset=string.printable, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length


def server_info(base_url: str, token: str) -> dict[str, Any]:
    """The server's ``GET /info``: its tasks, formats and devices' screen size."""
    request = urllib.request.Request(
        base_url.rstrip("/") + "/info", headers={"Authorization": f"Token {token}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


class WaypointGymEnv(gymnasium.Env):
    """One session of the environment server as a Gymnasium environment."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        task: str | None = None,
        level: int | None = None,
        run: str = "gymnasium",
        with_xml: bool = False,
        text_format: str | None = None,
        screen: tuple[int, int] | None = None,
        render_mode: str | None = None,
    ) -> None:
        if text_format is not None and text_format not in FORMATS:
            raise ValueError(f"text_format must be one of {', '.join(FORMATS)}: {text_format!r}")
        if screen is None:
            size = server_info(base_url, token).get("screen")
            if not size:
                raise ValueError(
                    "the server has no connected device to tell the screen size: pass screen"
                )
            screen = (size["width"], size["height"])
        self.width, self.height = screen
        self.reset_args = {"task": task, "level": level, "run": run, "with_xml": with_xml}
        self.text_format = text_format
        self.render_mode = render_mode
        observed: dict[str, spaces.Space] = {
            "screenshot": spaces.Box(0, 255, (self.height, self.width, 3), np.uint8),
            "instruction": AnyText(MAX_INSTRUCTION),
            "step": spaces.Discrete(MAX_STEPS_SEEN),
        }
        if with_xml:
            observed["xml"] = AnyText(MAX_XML)
        self.observation_space = spaces.Dict(observed)
        if text_format is None:
            self.action_space = spaces.Dict(
                {
                    "type": spaces.Discrete(len(ACTION_TYPES)),
                    "point": spaces.Box(0.0, 1.0, (4,), np.float32),
                    "text": AnyText(MAX_TEXT),
                    "memory": AnyText(MAX_TEXT),
                }
            )
        else:
            self.action_space = AnyText(MAX_OUTPUT)
        self.client = WaypointEnv(base_url, token)
        self._frame: np.ndarray | None = None

    # ---------------------------------------------------------------- API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        episode_seed = seed if seed is not None else int(self.np_random.integers(0, MAX_SEED))
        args = {k: v for k, v in {**self.reset_args, **(options or {})}.items() if v is not None}
        observation = self.client.reset(seed=episode_seed, **args).observation
        info = {"seed": episode_seed, "rule": observation.rule, "package": observation.package}
        return self._observed(observation), info

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        result = self.client.step(self.as_output(action))
        observation = result.observation
        info = deepcopy(observation.info)
        truncated = bool(result.done and info.get("truncated"))
        terminated = bool(result.done and not truncated)
        return self._observed(observation), float(result.reward or 0.0), terminated, truncated, info

    def render(self) -> np.ndarray | None:
        return None if self._frame is None else self._frame.copy()

    def close(self) -> None:
        self.client.close()

    # ---------------------------------------------------------------- conversions

    def as_output(self, action: Any) -> WaypointAction:
        """The space's action as the server's: a canonical action in pixels, or the text."""
        if self.text_format is not None:
            return WaypointAction(text=str(action), format=self.text_format)
        kind = ACTION_TYPES[int(action["type"])]
        fx, fy, fx2, fy2 = (float(v) for v in np.clip(action["point"], 0.0, 1.0))
        x, y = round(fx * (self.width - 1)), round(fy * (self.height - 1))
        text = str(action.get("text", ""))
        fields: dict[str, Any] = {
            "click": {"x": x, "y": y},
            "long_press": {"x": x, "y": y, "duration_ms": LONG_PRESS_MS},
            "swipe": {
                "x": x,
                "y": y,
                "x2": round(fx2 * (self.width - 1)),
                "y2": round(fy2 * (self.height - 1)),
                "duration_ms": SWIPE_MS,
            },
            "type": {"text": text},
            "key": {"keycode": text},
            "open_app": {"package": text},
            "wait": {"duration_ms": WAIT_MS},
            "answer": {"text": text},
            "terminate": {"status": "failure" if text.strip() == "failure" else "success"},
        }.get(kind, {})
        memory = str(action.get("memory", ""))
        return WaypointAction(action={"type": kind, **fields}, memory=memory)

    def _observed(self, observation) -> dict[str, Any]:
        image = Image.open(io.BytesIO(base64.b64decode(observation.screenshot))).convert("RGB")
        if image.size != (self.width, self.height):
            image = image.resize((self.width, self.height))
        self._frame = np.asarray(image, dtype=np.uint8).copy()
        observed = {
            "screenshot": self._frame.copy(),
            "instruction": observation.instruction,
            "step": min(observation.step, MAX_STEPS_SEEN - 1),
        }
        if "xml" in self.observation_space.spaces:
            observed["xml"] = observation.xml or ""
        return observed


class WaypointVectorEnv(SyncVectorEnv):
    """N sessions of the server as one vector environment, each stepped in its own thread: a
    batch takes its slowest device's step, not the sum. Next-step autoreset. The server needs
    N free devices: a session of a lockstep batch waiting for a device another one holds would
    wait for ever (the server's line refuses after ``WAYPOINT_RL_DEVICE_WAIT_S``)."""

    def __init__(self, env_fns: Sequence[Callable[[], WaypointGymEnv]]) -> None:
        super().__init__(env_fns, copy=True, autoreset_mode=AutoresetMode.NEXT_STEP)
        self._threads = ThreadPoolExecutor(max_workers=self.num_envs, thread_name_prefix="env")

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if seed is None or isinstance(seed, int):
            seed = [None if seed is None else seed + i for i in range(self.num_envs)]
        if len(seed) != self.num_envs:
            raise ValueError(f"give {self.num_envs} seeds, one per environment: {seed!r}")
        done = list(
            self._threads.map(
                lambda i: self.envs[i].reset(seed=seed[i], options=options), range(self.num_envs)
            )
        )
        self._terminations = np.zeros((self.num_envs,), dtype=np.bool_)
        self._truncations = np.zeros((self.num_envs,), dtype=np.bool_)
        self._autoreset_envs = np.zeros((self.num_envs,), dtype=np.bool_)
        infos: dict[str, Any] = {}
        for i, (observation, info) in enumerate(done):
            self._env_obs[i] = observation
            infos = self._add_info(infos, info, i)
        self._observations = concatenate(
            self.single_observation_space, self._env_obs, self._observations
        )
        return deepcopy(self._observations), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        given = list(iterate(self.action_space, actions))

        def one(i: int) -> tuple:
            if self._autoreset_envs[i]:
                observation, info = self.envs[i].reset()
                return observation, 0.0, False, False, info
            return self.envs[i].step(given[i])

        infos: dict[str, Any] = {}
        for i, result in enumerate(self._threads.map(one, range(self.num_envs))):
            observation, reward, terminated, truncated, info = result
            self._env_obs[i] = observation
            self._rewards[i] = reward
            self._terminations[i] = terminated
            self._truncations[i] = truncated
            infos = self._add_info(infos, info, i)
        self._observations = concatenate(
            self.single_observation_space, self._env_obs, self._observations
        )
        self._autoreset_envs = np.logical_or(self._terminations, self._truncations)
        return (
            deepcopy(self._observations),
            np.copy(self._rewards),
            np.copy(self._terminations),
            np.copy(self._truncations),
            infos,
        )

    def close_extras(self, **kwargs: Any) -> None:
        super().close_extras(**kwargs)
        self._threads.shutdown(wait=False)


# ``gymnasium.make("Waypoint-v0", base_url=..., token=..., task=...)``: a deterministic
# environment (the same seed and actions give the same observations and rewards).
gymnasium.register(
    "Waypoint-v0", entry_point="rl.gymnasium_env:WaypointGymEnv", nondeterministic=False
)

"""Gymnasium's API over the environment server: its own checker passes the environment, and a
vector of sessions steps several devices at once."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from devices.virtual import VirtualDevice
from rl.gymnasium_env import ACTION_TYPES, WaypointGymEnv, WaypointVectorEnv
from rl.models import Rollout
from tests.conftest import require_chromium
from tests.devices.conftest import free_port, grant

from .conftest import WEATHER
from .test_rollouts import clear_of_the_minute


@pytest.mark.django_db(transaction=True)
def test_gymnasiums_env_checker_passes_the_environment(serve, token):
    url = serve()
    made = gymnasium.make("Waypoint-v0", base_url=url, token=token, task=WEATHER, run="check-env")
    env = made.unwrapped  # with its spec: the checker holds it to its resets' determinism
    assert env.spec.nondeterministic is False
    assert env.observation_space["screenshot"].shape == (1200, 540, 3)
    clear_of_the_minute(20)  # its resets compare screens, and the status bar shows the time
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()
    assert Rollout.objects.filter(run_name="check-env").count() >= 8


@pytest.mark.django_db(transaction=True)
def test_a_model_output_as_text_is_the_action_of_the_text_form(serve, token):
    url = serve()
    env = WaypointGymEnv(url, token, task=WEATHER, text_format="mobile_use")
    try:
        observation, info = env.reset(seed=1)
        assert observation["instruction"].startswith("What is the temperature in ")
        assert info["seed"] == 1
        output = (
            "<think>SkyCast has the weather.</think>\nAction: Open SkyCast.\nMemory: none\n"
            '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "open", "text": '
            '"SkyCast"}}\n</tool_call>'
        )
        observation, reward, terminated, truncated, info = env.step(output)
        assert (reward, terminated, truncated) == (0.0, False, False)
        assert "invalid" not in info
        assert not np.array_equal(
            observation["screenshot"], env.observation_space.sample()["screenshot"]
        )
        _, reward, _, _, info = env.step("Tap the city.")
        assert (reward, info["invalid"]) == (-0.3, "no <tool_call> block")
    finally:
        env.close()


@pytest.fixture
def second_device(adb_server, project):
    """Another virtual device, granted to alice's project too."""
    device = VirtualDevice(
        port=free_port(), size="540x1200", seed=7, chromium_path=require_chromium()
    ).start()
    adb_server.connect(device.serial)
    grant(device.serial, project)
    yield device
    adb_server.run("disconnect", device.serial)
    device.stop()


@pytest.mark.django_db(transaction=True)
def test_a_vector_of_two_sessions_plays_two_devices_at_once(serve, token, second_device):
    url = serve()
    skycast = {
        "type": ACTION_TYPES.index("open_app"),
        "point": np.zeros(4, np.float32),
        "text": "SkyCast",
        "memory": "",
    }
    answer = {**skycast, "type": ACTION_TYPES.index("answer"), "text": "-99"}
    envs = WaypointVectorEnv([lambda: WaypointGymEnv(url, token, task=WEATHER)] * 2)
    try:
        observations, infos = envs.reset(seed=1)
        assert observations["screenshot"].shape == (2, 1200, 540, 3)
        assert list(infos["seed"]) == [1, 2]
        both = {key: (value, value) for key, value in skycast.items()}
        both["type"] = np.array([skycast["type"]] * 2)
        both["point"] = np.zeros((2, 4), np.float32)
        _, rewards, terminated, _, _ = envs.step(both)
        assert list(rewards) == [0.0, 0.0] and not terminated.any()
        ends = {key: (value, value) for key, value in answer.items()}
        ends["type"] = np.array([answer["type"]] * 2)
        ends["point"] = np.zeros((2, 4), np.float32)
        _, rewards, terminated, truncated, infos = envs.step(ends)
        assert list(terminated) == [True, True] and not truncated.any()
        assert list(rewards) == [0.0, 0.0]  # a wrong answer; no memory written
        assert list(infos["episode"]["success"]) == [False, False]
        # Next-step autoreset: the next batch starts both episodes again.
        observations, rewards, terminated, _, _ = envs.step(both)
        assert list(observations["step"]) == [0, 0]
    finally:
        envs.close()
    devices = set(Rollout.objects.values_list("device_serial", flat=True))
    assert len(devices) == 2

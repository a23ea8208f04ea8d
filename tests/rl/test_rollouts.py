"""A trainer drives the session's virtual device through the environment server, as OpenEnv's
clients do, and gets STAMP's rewards, each part apart; every rollout is kept."""

from __future__ import annotations

import base64
import time

import pytest
from openenv.core import GenericEnvClient

from agents.reference import solver_for
from devices.models import Lease
from devices.virtual import load_apps
from rl.client import WaypointEnv
from rl.models import RLSettings, Rollout
from rl.protocol import WaypointAction, WaypointObservation
from trajectories.models import Step, Trajectory

from .conftest import ORDER, WEATHER, play_solver, seen_by_solver

NOTHING = {"task": 0.0, "format": 0.0, "memory": 0.0, "total": 0.0}


def clear_of_the_minute(seconds: float = 20) -> None:
    """The status bar shows the time: start a comparison of screens with its minute to spare."""
    if time.time() % 60 > 60 - seconds:
        time.sleep(61 - time.time() % 60)


@pytest.mark.django_db(transaction=True)
def test_the_solvers_actions_earn_the_task_the_memory_and_no_format_penalty(serve, token, alice):
    url = serve()
    with WaypointEnv(url, token) as env:
        results = play_solver(env, WEATHER, seed=1, run="grpo-tiny")
        state = env.state()
    first, *steps = results
    # The first screen: the instruction and the rule in words; never the gold or the variables.
    assert first.observation.instruction.startswith("What is the temperature in ")
    assert first.observation.rule == (
        "The answer is right when its first number is the expected number. Answer with the "
        "number of degrees only (e.g. 21)."
    )
    assert set(first.observation.model_dump()) == {
        *("instruction", "rule", "screenshot", "image_format", "xml", "width", "height"),
        *("package", "step", "info", "timings", "done", "reward", "metadata"),
    }
    gold = load_apps(1).task(WEATHER).gold
    # Open SkyCast, answer: nothing until the end, then the task and the memory.
    assert [r.observation.info["reward"] for r in steps[:-1]] == [NOTHING]
    last = steps[-1]
    assert (last.done, last.reward) == (True, 1.3)
    assert last.observation.info["reward"] == {
        "task": 1.0,
        "format": 0.0,
        "memory": 0.3,
        "total": 1.3,
    }
    assert last.observation.info["episode"] == {
        "task": 1.0,
        "format": 0.0,
        "memory": 0.3,
        "total": 1.3,
        "success": True,
        "memory_grade": "complete",
        "memory_by": "rules",
    }
    assert last.observation.info["ended"] == "the agent answered"
    # The rollout is a trajectory that opens like any episode, with the run and the rewards.
    rollout = Rollout.objects.get()
    assert (rollout.run_name, rollout.template, rollout.seed, rollout.status) == (
        "grpo-tiny",
        WEATHER,
        1,
        "done",
    )
    assert (rollout.reward, rollout.success, rollout.steps) == (1.3, True, 2)
    assert rollout.rewards == [NOTHING, last.observation.info["reward"]]
    trajectory = rollout.trajectory
    assert (trajectory.source, trajectory.recorder_name, trajectory.outcome) == (
        "rollout",
        "rollout:grpo-tiny",
        "success",
    )
    assert trajectory.metadata["rollout"]["run"] == "grpo-tiny"
    assert trajectory.metadata["rollout"]["rewards"] == rollout.rewards
    assert trajectory.metadata["rollout"]["reward"] == 1.3
    assert [o["step"] for o in trajectory.metadata["rollout"]["outputs"]] == [0, 1]
    kinds = list(Step.objects.filter(trajectory=trajectory).values_list("action_type", flat=True))
    assert kinds == ["open_app", "answer", "terminate"]
    answered = Step.objects.get(trajectory=trajectory, action_type="answer")
    assert gold in answered.memory  # the memory the agent wrote, kept with its step
    assert (state.episode_id, state.trajectory, state.run) == (
        str(rollout.pk),
        trajectory.pk,
        "grpo-tiny",
    )
    assert (state.done, state.reward, state.step_count, state.stored) == (True, 1.3, 2, True)
    assert not Lease.objects.exists()  # the device is free again


@pytest.mark.django_db(transaction=True)
def test_a_wrong_answer_earns_no_task_reward_but_its_memory_still_counts(serve, token):
    url = serve()
    with WaypointEnv(url, token) as env:
        results = play_solver(env, WEATHER, seed=1, answer="-99")
    episode = results[-1].observation.info["episode"]
    assert (episode["task"], episode["memory"], episode["total"]) == (0.0, 0.3, 0.3)
    assert episode["success"] is False
    assert Trajectory.objects.get().outcome == "failure"


@pytest.mark.django_db(transaction=True)
def test_an_invalid_output_costs_the_format_reward_once_and_leaves_the_device_alone(serve, token):
    url = serve()
    with WaypointEnv(url, token) as env:
        first = env.reset(seed=1, task=WEATHER).observation
        garbled = WaypointAction(text="I think I should tap SkyCast", format="mobile_use")
        once = env.step(garbled)
        twice = env.step(WaypointAction(text="{not json", format="waypoint"))
        thrice = env.step(WaypointAction(action={"type": "click", "x": 9000, "y": 3}))
    assert once.observation.info == {
        "invalid": "no <tool_call> block",
        "reward": {"task": 0.0, "format": -0.3, "memory": 0.0, "total": -0.3},
    }
    assert once.observation.screenshot == first.screenshot  # nothing reached the device
    assert twice.observation.info == {
        "invalid": "the output is not JSON (Expecting property name enclosed in double quotes)",
        "reward": NOTHING,
    }
    assert thrice.done
    assert thrice.observation.info["invalid"] == (
        "action: point (9000, 3) lies outside the 540x1200 screenshot"
    )
    assert thrice.observation.info["ended"] == "3 invalid outputs in a row"
    assert thrice.observation.info["truncated"] is True
    assert thrice.observation.info["episode"]["format"] == -0.3
    assert thrice.observation.info["episode"]["total"] == -0.3
    rollout = Rollout.objects.get()
    assert (rollout.status, rollout.reward) == ("truncated", -0.3)
    assert Step.objects.filter(trajectory=rollout.trajectory).count() == 0
    # The trajectory keeps what each output was and why it was no action.
    outputs = rollout.trajectory.metadata["rollout"]["outputs"]
    assert [(o["step"], o["invalid"][:20]) for o in outputs] == [
        (None, "no <tool_call> block"),
        (None, "the output is not JS"),
        (None, "action: point (9000,"),
    ]
    assert outputs[0]["text"] == "I think I should tap SkyCast"


@pytest.mark.django_db(transaction=True)
def test_the_same_seed_and_the_same_actions_give_the_same_observations_and_rewards(serve, token):
    url = serve()
    clear_of_the_minute()
    with WaypointEnv(url, token) as env:
        runs = [play_solver(env, ORDER, seed=2) for _ in range(2)]
    seen = [[(r.observation.screenshot, r.observation.xml, r.reward) for r in run] for run in runs]
    assert len(seen[0]) == 4  # the reset, open FreshCart, its Orders tab, answer
    assert seen[0] == seen[1]
    assert runs[0][-1].observation.info == runs[1][-1].observation.info


# OpenEnv 0.2.1's client opens its WebSocket as websockets 17 deprecates: its own concern.
@pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager")
@pytest.mark.django_db(transaction=True)
def test_openenv_own_client_plays_an_episode_with_the_token_in_its_url(serve, token):
    """OpenEnv's GenericEnvClient, as a stock trainer uses it: Basic auth from the URL, plain
    dictionaries; a memory that holds part of the order number earns half the memory reward."""
    url = serve().replace("http://", f"http://token:{token}@")
    solver = solver_for(ORDER)
    with GenericEnvClient(url) as env:
        result = env.reset(seed=1, task=ORDER, with_xml=True)
        solver.start(result.observation["instruction"])
        while not result.done:
            seen = WaypointObservation(**result.observation)
            step = solver.act(seen_by_solver(seen))
            memory = "the newest order's number starts FC" if step.memory else ""
            result = env.step({"action": step.action, "memory": memory})
        state = env.state()
    assert result.reward == 1.15
    assert result.observation["info"]["episode"]["memory_grade"] == "partial"
    assert result.observation["info"]["episode"]["memory"] == 0.15
    assert base64.b64decode(result.observation["screenshot"]).startswith(b"\x89PNG")
    assert (state["template"], state["seed"], state["done"]) == (ORDER, 1, True)


@pytest.mark.django_db(transaction=True)
def test_with_storage_off_only_the_scores_are_kept_by_the_projects_reward_config(
    serve, token, project
):
    rewards = {"parts": {"task": 1, "memory": 0.5}, "delay": "end"}
    RLSettings.objects.create(project=project, store_rollouts=False, rewards=rewards)
    url = serve()
    with WaypointEnv(url, token) as env:
        results = play_solver(env, WEATHER, seed=1, run="fast")
        state = env.state()
    episode = results[-1].observation.info["episode"]
    assert (episode["task"], episode["memory"], episode["total"]) == (1.0, 0.5, 1.5)
    assert "format" not in episode  # a part the config leaves out is not reported
    assert not Trajectory.objects.exists()
    rollout = Rollout.objects.get()
    assert (rollout.trajectory, rollout.reward, rollout.status) == (None, 1.5, "done")
    assert [r["total"] for r in rollout.rewards] == [0.0, 1.5]
    assert (state.stored, state.trajectory) == (False, None)
    assert not Lease.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_reset_with_bad_arguments_is_refused_with_what_is_wrong(serve, token):
    url = serve()
    with WaypointEnv(url, token) as env:
        for arguments, message in [
            (
                {"task": "nope"},
                "task: 'nope' is not one of the 2 tasks this server poses (weather-temp-now, "
                "freshcart-order-number)",
            ),
            ({"taks": WEATHER}, "reset: unknown argument 'taks' (known: seed, task, level, run, "),
            ({"seed": -1}, "seed: must be a whole number from 0 to 2147483647, got -1"),
            ({"level": 4}, "level: 4 is no difficulty level (the levels are 1, 2 and 3"),
            (
                {"rewards": {"parts": {"speed": 1}}},
                "rewards.parts: unknown part 'speed' (known: task, format, memory)",
            ),
        ]:
            with pytest.raises(RuntimeError, match="Server error: ") as refused:
                env.reset(**arguments)
            assert message in str(refused.value)
        with pytest.raises(RuntimeError, match="no episode: reset first"):
            env.step(WaypointAction(action={"type": "back"}))
    assert not Rollout.objects.exists()
    assert not Lease.objects.exists()

"""STAMP's rewards on episodes built so the answer is known: the parts, their delay, the memory
graded by the rules or by the judge, and the configs that name them."""

from __future__ import annotations

import pytest

from rl.rewards import (
    EpisodeRewards,
    MemoryItem,
    RewardConfig,
    Turn,
    check_rewards,
    memory_grade,
    memory_grade_by_rules,
)
from tests.annotate.llm_server import Server
from trajectories.validation import InvalidData

PRICE = MemoryItem("shop.price", "$12.50", "price of the kettle")
CODE = MemoryItem("notes.code", "4821", "door code")
SHOWN = frozenset({"shop.price", "notes.code"})


def turns(*memories: str, shown_from: int = 0) -> list[Turn]:
    return [
        Turn(shown=SHOWN if i >= shown_from else frozenset(), memory=m)
        for i, m in enumerate(memories)
    ]


def test_memory_is_complete_partial_or_none_by_the_rules():
    assert memory_grade_by_rules(turns("", "kettle $12.50, code 4821"), [PRICE, CODE]) == "complete"
    assert memory_grade_by_rules(turns("kettle 12.50"), [PRICE, CODE]) == "partial"
    assert memory_grade_by_rules(turns("nothing yet", "none"), [PRICE, CODE]) == "none"
    assert memory_grade_by_rules(turns("anything"), []) is None  # a task with nothing to keep


def test_memory_written_before_the_first_screen_that_showed_a_value_does_not_count():
    # A guess written before the price was on screen is not memory of it.
    assert memory_grade_by_rules(turns("12.50 4821", "", shown_from=1), [PRICE, CODE]) == "none"


def test_a_complete_episode_earns_the_task_and_the_memory_at_its_end():
    rewards = EpisodeRewards(RewardConfig())
    assert rewards.on_output(invalid=False) == {
        "task": 0.0,
        "format": 0.0,
        "memory": 0.0,
        "total": 0.0,
    }
    last, episode = rewards.at_end(invalid=False, success=True, grade="complete")
    assert last == {"task": 1.0, "format": 0.0, "memory": 0.3, "total": 1.3}
    assert episode == last


def test_partial_memory_earns_half_the_memory_reward_and_a_wrong_answer_no_task_reward():
    last, episode = EpisodeRewards(RewardConfig()).at_end(False, success=False, grade="partial")
    assert episode == {"task": 0.0, "format": 0.0, "memory": 0.15, "total": 0.15}


def test_invalid_outputs_cost_the_format_reward_once_per_episode():
    rewards = EpisodeRewards(RewardConfig())
    assert rewards.on_output(invalid=True)["format"] == -0.3
    assert rewards.on_output(invalid=True)["format"] == 0.0
    _, episode = rewards.at_end(invalid=True, success=True, grade="none")
    assert episode == {"task": 1.0, "format": -0.3, "memory": 0.0, "total": 0.7}


def test_with_delay_end_every_part_comes_at_the_last_step():
    rewards = EpisodeRewards(check_rewards({"delay": "end"}))
    assert rewards.on_output(invalid=True)["total"] == 0.0
    last, episode = rewards.at_end(invalid=False, success=True, grade="partial")
    assert last == {"task": 1.0, "format": -0.3, "memory": 0.15, "total": 0.85}
    assert episode == last


def test_a_config_counts_only_the_parts_it_names_with_their_weights():
    config = check_rewards({"parts": {"task": 2, "memory": 1}})
    rewards = EpisodeRewards(config)
    assert rewards.on_output(invalid=True) == {"task": 0.0, "memory": 0.0, "total": 0.0}
    _, episode = rewards.at_end(invalid=False, success=True, grade="partial")
    assert episode == {"task": 2.0, "memory": 0.5, "total": 2.5}


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ([], "rewards: must be an object, got list"),
        ({"weights": {}}, "rewards: unknown key 'weights' (known: parts, memory_by, delay)"),
        ({"parts": {}}, "rewards.parts: must name at least one of task, format, memory with"),
        ({"parts": {"task": "1"}}, "rewards.parts.task: must be a number, got '1'"),
        ({"parts": {"task": True}}, "rewards.parts.task: must be a number, got True"),
        ({"memory_by": "vibes"}, "rewards.memory_by: must be rules or judge, got 'vibes'"),
        ({"delay": "later"}, "rewards.delay: must be step or end, got 'later'"),
        (
            {"memory_by": "judge"},
            "rewards.memory_by: judge needs the server's judge, and WAYPOINT_JUDGE_URL is not set",
        ),
    ],
)
def test_a_bad_config_is_refused_naming_what_is_wrong(settings, config, message):
    settings.WAYPOINT_JUDGE_URL = ""
    with pytest.raises(InvalidData) as refused:
        check_rewards(config)
    assert str(refused.value).startswith(message)


def test_stamps_config_is_the_default():
    assert check_rewards({}).as_dict() == {
        "parts": {"task": 1.0, "format": -0.3, "memory": 0.3},
        "memory_by": "rules",
        "delay": "step",
    }


@pytest.fixture
def judge(settings):
    """The server's judge: a local OpenAI-compatible server answering as scripted."""
    servers = []

    def start(replies):
        server = Server(replies)
        servers.append(server)
        settings.WAYPOINT_JUDGE_URL = server.url
        settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1"]
        settings.LLM_HTTP_RETRIES = 0
        return server

    yield start
    for server in servers:
        server.close()


def test_the_judge_grades_the_memory_with_stamps_prompt(judge, db):
    server = judge([(200, "Partial Match", 0)])
    config = check_rewards({"memory_by": "judge"})
    # The rules find both values; the judge, asked with Table 17's prompt, says partial.
    memory = turns("kettle $12.50", "code 4821")
    grade = memory_grade(config, "Buy the kettle.", memory, [PRICE, CODE])
    assert grade == ("partial", "judge")
    [request] = server.requests
    prompt = request["body"]["messages"][0]["content"]
    assert "I have a task to perform using Chrome on my phone, as follows:\nBuy the kettle." in (
        prompt
    )
    assert "as follows:\nprice of the kettle: $12.50\ndoor code: 4821\n" in prompt
    assert "memorized the following:\nkettle $12.50\ncode 4821\n" in prompt


def test_a_judge_without_a_verdict_leaves_the_rules_grade_and_says_why(judge, db):
    judge([(200, "It is hard to say.", 0)])
    config = check_rewards({"memory_by": "judge"})
    grade, by = memory_grade(config, "Buy the kettle.", turns("kettle 12.50"), [PRICE, CODE])
    assert grade == "partial"
    assert by == (
        "rules (Buy the kettle.: the judge answered 'It is hard to say.', not one of Complete / "
        "Partial / No Match)"
    )

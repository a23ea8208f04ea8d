"""TRL's GRPO trains a tiny model against Waypoint's RL environment server: a stock trainer
drives the devices and learns from STAMP's rewards.

    # the environment: a project's devices (here one virtual device started for it)
    .venv/bin/python manage.py env_server --project 1 --virtual 1 --tasks weather-temp-now

    # the trainer, anywhere that reaches the server (TRL on a CPU torch: nothing is downloaded)
    pip install torch==2.13.0 trl openenv-core==0.2.1 websockets==17.4
    PYTHONPATH=. python examples/grpo_tiny.py --url http://127.0.0.1:8765 --token TOKEN

The model is GPT-2's architecture built from a config (2 layers of 64, randomly initialised)
over a word-level tokenizer built here from the prompts' words and the digits; it answers in
digits (the other words are suppressed when it samples, so that a random start finds a right
answer now and then: a reward to learn from). The prompts are the server's instructions for
the task at two seeds whose answers are one digit ("What is the temperature in Lima right now,
according to SkyCast?": 7 at seed 1, Perth's 4 at seed 28); a completion is the model's answer
(graded by its first number), played as one episode by the reward function: a reset at the
prompt's seed, then the answer as an ``answer`` action (written down as the memory too). Its
reward is the server's r(τ): 1 when the device grades the answer right, 0.3 · Γ for the memory,
-0.3 when the output is no action (an empty answer). The model cannot see the screen, so it
learns each seed's answer by heart: the point is the loop, a stock trainer stepping the
devices, not the agent. The reward curve is printed at the end (20 steps on the 2-core
machine take about 4 minutes; in one run the mean reward was -0.08 at the first step, 0.43 over
steps 1-10 and 0.62 over steps 11-20); every episode is a rollout of the run (``--run``) on the
server, stored as the project says.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

from datasets import Dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

from rl.client import WaypointEnv
from rl.protocol import WaypointAction

TASK = "weather-temp-now"
SPECIALS = ["[PAD]", "[UNK]", "[BOS]", "[EOS]"]


def instructions(url: str, token: str, seeds: list[int], run: str) -> dict[int, str]:
    """The task's instruction at each seed, as the server poses it (a reset; given up at once)."""
    found = {}
    with WaypointEnv(url, token) as env:
        for seed in seeds:
            found[seed] = env.reset(seed=seed, task=TASK, run=run).observation.instruction
            env.step(WaypointAction(action={"type": "terminate", "status": "failure"}))
    return found


def word_tokenizer(texts: list[str]) -> PreTrainedTokenizerFast:
    """A word-level tokenizer over the prompts' words and the digits (nothing downloaded)."""
    splitter = pre_tokenizers.Whitespace()
    words = sorted({w for text in texts for w, _ in splitter.pre_tokenize_str(text)})
    vocab = {name: i for i, name in enumerate(SPECIALS + list("0123456789") + words)}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = splitter
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="[PAD]",
        unk_token="[UNK]",
        bos_token="[BOS]",
        eos_token="[EOS]",
    )
    wrapped.padding_side = "left"
    return wrapped


def not_digits(tokenizer: PreTrainedTokenizerFast) -> list[int]:
    """The tokens a completion may not use: every word but the digits and the end."""
    keep = {tokenizer.convert_tokens_to_ids(d) for d in "0123456789"} | {tokenizer.eos_token_id}
    return [i for i in range(len(tokenizer)) if i not in keep]


def tiny_model(tokenizer: PreTrainedTokenizerFast) -> GPT2LMHeadModel:
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=128,
        n_embd=64,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = GPT2LMHeadModel(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


class Episodes:
    """The reward function: each completion played as an episode on the server, ``sessions``
    at once (one session per thread, kept open between steps)."""

    __name__ = "waypoint"  # how TRL names the reward in its logs

    def __init__(self, url: str, token: str, run: str, sessions: int) -> None:
        self.url, self.token, self.run = url, token, run
        self.threads = ThreadPoolExecutor(max_workers=sessions)
        self.local = threading.local()

    def play(self, seed: int, completion: str) -> float:
        env = getattr(self.local, "env", None)
        if env is None:
            env = self.local.env = WaypointEnv(self.url, self.token).connect()
        env.reset(seed=seed, task=TASK, run=self.run)
        answer = " ".join(completion.split())
        action = WaypointAction(action={"type": "answer", "text": answer}, memory=answer)
        return float(env.step(action).reward or 0.0)

    def __call__(self, prompts, completions, seed, **kwargs) -> list[float]:
        return list(self.threads.map(self.play, seed, completions))


class RewardCurve(TrainerCallback):
    def __init__(self) -> None:
        self.points: list[tuple[int, float]] = []

    def on_log(self, args, state, control, logs=None, **kwargs) -> None:
        if logs and "reward" in logs:
            self.points.append((state.global_step, logs["reward"]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default="http://127.0.0.1:8765")
    parser.add_argument("--token", required=True, help="one of Waypoint's API tokens")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--seeds", default="1,28", help="the task's instances, e.g. 1,28")
    parser.add_argument("--sessions", type=int, default=1, help="episodes at once (devices)")
    parser.add_argument("--run", default="grpo-tiny", help="the run's name on the server")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]

    asked = instructions(args.url, args.token, seeds, f"{args.run}-prompts")
    tokenizer = word_tokenizer(list(asked.values()))
    model = tiny_model(tokenizer)
    dataset = Dataset.from_dict(
        {
            "prompt": [asked[s] for s in seeds] * 64,
            "seed": seeds * 64,
        }
    )
    curve = RewardCurve()
    with tempfile.TemporaryDirectory() as output:
        trainer = GRPOTrainer(
            model=model,
            processing_class=tokenizer,
            reward_funcs=Episodes(args.url, args.token, args.run, args.sessions),
            train_dataset=dataset,
            callbacks=[curve],
            args=GRPOConfig(
                output_dir=output,
                max_steps=args.steps,
                per_device_train_batch_size=8,
                num_generations=8,
                max_completion_length=2,
                learning_rate=1e-2,
                beta=0.0,
                temperature=1.0,
                logging_steps=1,
                save_strategy="no",
                report_to="none",
                use_cpu=True,
                bf16=False,
                seed=0,
                generation_kwargs={"suppress_tokens": not_digits(tokenizer)},
            ),
        )
        trainer.train()
    print("\nreward curve (mean r(τ) of the step's 8 episodes):")
    for step, reward in curve.points:
        bar = "#" * max(0, round((reward + 0.3) * 20))
        print(f"  step {step:3d}  {reward:+.3f}  {bar}")


if __name__ == "__main__":
    main()

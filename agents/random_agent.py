"""The random agent, the floor every other agent is compared with: taps what looks tappable
(or anywhere), swipes, goes back, types a word, and now and then answers a guess."""

from __future__ import annotations

import random

from trajectories.uixml import UITree, UIXmlError, parse_ui_xml

from .base import AgentStep, Observation


def ui_tree(observation: Observation) -> UITree | None:
    """The observation's UI tree (None when there is no XML or it cannot be read)."""
    if not observation.xml:
        return None
    try:
        return parse_ui_xml(observation.xml)
    except UIXmlError:
        return None


WORDS = ("yes", "no", "42", "Mia", "$10.00", "14:30", "FreshCart", "done")


class RandomAgent:
    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.name = f"random:{seed}"
        self.rng = random.Random(seed)

    def start(self, goal: str) -> None:
        # The same goal and seed play the same episode (on the same screens).
        self.rng = random.Random(f"{self.seed}/{goal}")

    def act(self, observation: Observation) -> AgentStep:
        rng, w, h = self.rng, observation.width, observation.height
        roll = rng.random()
        if roll < 0.04:
            action = {"type": "answer", "text": rng.choice(WORDS)}
        elif roll < 0.14:
            action = {"type": "back"}
        elif roll < 0.22:
            action = {"type": "type", "text": rng.choice(WORDS)}
        elif roll < 0.32:
            x, y = rng.randrange(w // 4, 3 * w // 4), rng.randrange(h // 4, 3 * h // 4)
            dy = rng.choice((-1, 1)) * h // 4
            action = {"type": "swipe", "x": x, "y": y, "x2": x, "y2": y + dy, "duration_ms": 300}
        else:
            tree = ui_tree(observation)
            tappable = [e for e in tree.interactable() if e.area] if tree else []
            if tappable:
                x, y = rng.choice(tappable).center
            else:
                x, y = rng.randrange(w), rng.randrange(h)
            action = {"type": "click", "x": max(0, min(x, w - 1)), "y": max(0, min(y, h - 1))}
        return AgentStep(action=action, raw_output="random")

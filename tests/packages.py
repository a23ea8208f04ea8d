"""Waypoint's own packages, as the tests that read the source go through them."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "agents",
    "annotate",
    "config",
    "core",
    "devices",
    "environments",
    "evaluation",
    "explore",
    "fixtures",
    "formats",
    "frontend",
    "graphs",
    "rl",
    "trajectories",
)

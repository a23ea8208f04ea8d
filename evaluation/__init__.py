"""Scoring an agent's predictions with the papers' metrics (see .scoring)."""

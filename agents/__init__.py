"""Agents on devices: benchmark suites from task templates, the runner (one Celery task per
episode over a device pool), agent regimes, scripted solvers and results."""

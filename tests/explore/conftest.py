"""Explorations on the session's real virtual device, walked by a real Celery worker (the
agents' tests' worker and device fixtures)."""

from __future__ import annotations

from tests.agents import conftest as agents_conftest

adb_server = agents_conftest.adb_server
adb_servers = agents_conftest.adb_servers
device = agents_conftest.device
virtual_device = agents_conftest.virtual_device
agent_worker = agents_conftest.agent_worker
pool = agents_conftest.pool

"""The LLM endpoint's limits hold across worker processes: requests at once and requests per
window, kept in lock files (the embedded set-up) or in Redis (several machines)."""

from __future__ import annotations

import multiprocessing
import threading
import time
import urllib.request

import pytest
import redis
from django.conf import settings as django_settings

from annotate.proposers import get_proposer
from core import llm_limits as limits
from tests.annotate.test_llm_proposer import SEGMENTS, episode


def redis_url() -> str:
    """The broker's Redis in CI (it must answer there); else a local one, if it runs."""
    url = django_settings.CELERY_BROKER_URL
    if url.startswith("redis://"):
        return url
    url = "redis://127.0.0.1:6379/0"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=0.5).ping()
    except redis.exceptions.ConnectionError:
        pytest.skip("no Redis at 127.0.0.1:6379 (CI runs this test against its broker's)")
    return url


@pytest.fixture(params=["files", "redis"])
def backend(request, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    settings.LLM_LIMITS_URL = redis_url() if request.param == "redis" else ""
    settings.LLM_SLOT_WAIT_S = 60
    return request.param


def worker(url: str, requests: int, window_s: float) -> None:
    limits._limiters.clear()  # the parent's connections stay the parent's
    for _ in range(requests):
        with limits.request_slot(url, window_s=window_s):
            urllib.request.urlopen(urllib.request.Request(url, data=b"{}"), timeout=30).read()


def run_workers(url: str, processes: int, requests: int, window_s: float = 60.0) -> None:
    fork = multiprocessing.get_context("fork")
    workers = [
        fork.Process(target=worker, args=(url, requests, window_s)) for _ in range(processes)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0] * processes


def test_three_workers_never_have_more_requests_in_flight_than_allowed(backend, llm, settings):
    settings.LLM_MAX_IN_FLIGHT = 2
    server = llm(lambda body: (200, SEGMENTS, 0.15))
    run_workers(server.url, processes=3, requests=4)
    assert len(server.requests) == 12
    print(f"{backend}: most requests in flight {server.most_in_flight} (limit 2)")
    assert server.most_in_flight == 2


def test_three_workers_keep_to_the_rate_together(backend, llm, settings):
    settings.LLM_MAX_IN_FLIGHT = 3
    settings.LLM_REQUESTS_PER_MINUTE = 3  # here: 3 in any 1 s window
    server = llm(lambda body: (200, SEGMENTS, 0))
    run_workers(server.url, processes=3, requests=3, window_s=1.0)
    starts = sorted(r["at"] for r in server.requests)
    assert len(starts) == 9
    spans = [later - first for first, later in zip(starts, starts[3:], strict=False)]
    print(f"{backend}: shortest span of 4 consecutive starts {min(spans):.3f} s (window 1 s)")
    # A 4th request never starts within the window of 3 others (the margin is the time from
    # taking a place in the rate to the request reaching the server, on a busy machine).
    assert min(spans) > 0.8


def test_a_request_that_waits_too_long_for_a_slot_fails_the_proposal(backend, llm, settings):
    settings.LLM_MAX_IN_FLIGHT = 1
    settings.LLM_SLOT_WAIT_S = 0
    server = llm(lambda body: (200, SEGMENTS, 0))
    held, release = threading.Event(), threading.Event()

    def hold():
        with limits.request_slot(server.url + "/chat/completions"):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    try:
        started = time.monotonic()
        error = get_proposer("llm").propose(episode()).error
    finally:
        release.set()
        holder.join()
    assert error == (
        f"no free request slot for {server.url}/chat/completions within 0 s (the limits are "
        "1 at once: LLM_MAX_IN_FLIGHT, LLM_REQUESTS_PER_MINUTE)"
    )
    assert server.requests == [] and time.monotonic() - started < 5


def test_a_limits_url_that_is_not_redis_is_refused(settings):
    settings.LLM_LIMITS_URL = "amqp://guest@localhost//"
    with pytest.raises(ValueError, match="LLM_LIMITS_URL: 'amqp://guest@localhost//' is not a"):
        limits.limiter()

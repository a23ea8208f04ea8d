"""Shared fixtures: the three users of every permission test, and a real Celery worker."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, connections

REPO = Path(__file__).resolve().parent.parent
REALDATA = REPO.parent / "shared" / "realdata"


@pytest.fixture(scope="session", autouse=True)
def blob_storage(tmp_path_factory):
    """Blobs and job folders written by tests go to throwaway folders, shared with workers."""
    from django.test import override_settings

    root = tmp_path_factory.mktemp("blobs")
    storages = dict(settings.STORAGES)
    if storages["default"]["BACKEND"].endswith("FileSystemStorage"):
        storages["default"] = {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(root), "base_url": "/media/"},
        }
    jobs_tmp = tmp_path_factory.mktemp("jobs-tmp")
    with override_settings(MEDIA_ROOT=root, STORAGES=storages, WAYPOINT_JOB_TMP_DIR=jobs_tmp):
        yield root


@pytest.fixture(scope="session", autouse=True)
def static_files_by_their_own_names():
    """Pages name static files as they are in the apps, as with DEBUG on: the tests run with
    DEBUG off, where the production storage needs a collectstatic's manifest, and the browser
    tests' live server serves the apps' files, which have no hashed names.
    tests/frontend/test_static_files.py checks the production storage's names."""
    from django.test import override_settings

    storages = dict(settings.STORAGES)
    storages["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    with override_settings(STORAGES=storages):
        yield


@pytest.fixture(scope="session", autouse=True)
def database_sessions():
    """Sessions in the database alone, with or without a Redis configured (which puts them in
    Redis in front of it), so that what a page costs in queries is the same in every run;
    tests/frontend/test_sessions.py runs both."""
    from django.test import override_settings

    with override_settings(SESSION_ENGINE="django.contrib.sessions.backends.db"):
        yield


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user("alice", "alice@example.org", "alice-password")


@pytest.fixture
def bob(db):
    return get_user_model().objects.create_user("bob", "bob@example.org", "bob-password")


@pytest.fixture
def charlie(db):
    return get_user_model().objects.create_user("charlie", "charlie@example.org", "charlie-pw")


@pytest.fixture
def dave(project, alice):
    """A reviewer of the project."""
    from trajectories.services import do_set_membership

    user = get_user_model().objects.create_user("dave", "dave@example.org", "dave-password")
    do_set_membership(project, user, "reviewer", alice)
    return user


@pytest.fixture
def project(alice, bob):
    """A project owned by alice (admin) with bob as annotator; charlie is an outsider."""
    from trajectories.services import do_create_project, do_set_membership

    project = do_create_project("Shops", alice)
    do_set_membership(project, bob, "annotator", alice)
    return project


def _worker_database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or ""
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{auth}{db.get('HOST') or ''}{port}/{db['NAME']}"


# The queue of the tests that kill a worker, this session's own: a killed worker leaves its
# message unacknowledged, and the broker hands it back (after its visibility timeout) to the
# next consumer of that queue. With a fixed name, a later session's worker received an earlier
# session's episode message, whose id (a fresh test database counts from 1 again) named this
# session's episode.
FAULTS_QUEUE = f"faults-{uuid.uuid4().hex[:12]}"


def start_worker(
    log: Path, database_url: str, *args: str, program: list[str] | None = None, **env_extra: str
) -> subprocess.Popen:
    """Start a real Celery worker process on the test database and broker; wait until ready.

    ``program`` replaces ``python -m celery`` (e.g. a script that patches the worker first).
    """
    env = dict(os.environ, DATABASE_URL=database_url, DEBUG=os.environ.get("DEBUG", "1"))
    env.setdefault("SECRET_KEY", "test-worker-secret")
    env["WAYPOINT_VAR_DIR"] = str(settings.VAR_DIR)
    env["MEDIA_ROOT"] = str(settings.MEDIA_ROOT)
    env["WAYPOINT_JOB_TMP_DIR"] = str(settings.WAYPOINT_JOB_TMP_DIR)
    env.update(env_extra)
    broker_options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})
    if "data_folder_in" in broker_options:
        env["WAYPOINT_BROKER_DIR"] = str(Path(broker_options["data_folder_in"]).parent)
    command = [
        *(program or [sys.executable, "-m", "celery"]),
        "-A",
        "config",
        "worker",
        "-P",
        "solo",
        "--loglevel=info",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        *args,
    ]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while b"ready." not in log.read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"the Celery worker did not start:\n{log.read_text()}")
        time.sleep(0.2)
    return process


def stop_worker(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="session")
def worker_database_url(django_db_setup, django_db_blocker) -> str:
    with django_db_blocker.unblock():
        return _worker_database_url()


@pytest.fixture(scope="session")
def celery_worker(worker_database_url, tmp_path_factory):
    """A real Celery worker process on the test database and the configured broker.

    Tests that use it must commit their data (``transactional_db``) so the worker sees it.
    """
    log = tmp_path_factory.mktemp("worker") / "worker.log"
    process = start_worker(log, worker_database_url)
    yield process
    broker_options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})
    if "data_folder_in" in broker_options:
        shutil.rmtree(Path(broker_options["data_folder_in"]).parent, ignore_errors=True)
    stop_worker(process)


def wait_for_job(job_id: int, timeout: float = 120):
    """Poll a job until the worker finishes it."""
    from trajectories.models import Job

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = Job.objects.get(pk=job_id)
        if job.is_finished:
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s: {job.status}")


SHOTS = os.environ.get("WAYPOINT_TEST_SCREENSHOTS")  # a folder to look at the pages in


IN_CI = os.getenv("CI", "").lower() in {"1", "true", "yes"}


def missing_tool(reason: str) -> None:
    """Skip a test whose tool this machine lacks; in CI that is a failure, never a quiet skip."""
    if IN_CI:
        pytest.fail(f"{reason}; CI must provide it (make test provisions it)", pytrace=False)
    pytest.skip(reason)


def require_chromium() -> str:
    if not settings.CHROMIUM_PATH:
        missing_tool("no Chromium (make test installs one, or set CHROMIUM_PATH)")
    return settings.CHROMIUM_PATH


@pytest.fixture
def browser(monkeypatch):
    """Chromium driven by Playwright, for end-to-end tests against ``live_server``."""
    require_chromium()
    # Playwright's sync API keeps an event loop in this thread; the ORM calls here are sync.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    from core.chromium import CHROMIUM_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=settings.CHROMIUM_PATH, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
        # ORM calls made while Playwright's loop runs open their own connection: close it
        # here, in that context, or it outlives the test database.
        connections.close_all()


def shot(page, name: str, **options) -> None:
    """Save a screenshot when WAYPOINT_TEST_SCREENSHOTS names a folder."""
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), **options)


@pytest.fixture(autouse=True)
def _fresh_list_cache():
    """Each test starts with no kept lists or labels: a test database is emptied between
    tests, so a project (trajectory) of the next test can have the same id and version as one
    of the last."""
    from django.core.cache import caches

    caches["lists"].clear()
    caches["labels"].clear()

"""The production settings pass Django's deployment checks."""

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

REPO = Path(__file__).resolve().parent.parent


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY")}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION = {
    "SECRET_KEY": "a-long-random-production-secret-" + "x" * 40,
    "ALLOWED_HOSTS": "waypoint.example.org",
}


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    (tmp_path / "staticfiles.json").write_text('{"paths": {}, "version": "1.1"}')  # collected
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING", STATIC_ROOT=str(tmp_path), **PRODUCTION
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.parametrize("deploy", [["--deploy"], []])
def test_check_says_when_static_files_are_not_collected(tmp_path, deploy):
    result = run_manage("check", *deploy, STATIC_ROOT=str(tmp_path), **PRODUCTION)
    assert result.returncode != 0
    assert (
        "(frontend.E001) static files are not collected: run `manage.py collectstatic "
        f"--noinput` (the manifest {tmp_path / 'staticfiles.json'} is missing)"
    ) in result.stderr


def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off():
    result = run_manage("check")
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def database_settings(tmp_path, **env: str) -> subprocess.CompletedProcess:
    """CONN_MAX_AGE and CONN_HEALTH_CHECKS as config/settings.py computes them from ``env``."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DEBUG", "SECRET_KEY", "WAYPOINT_CONN_MAX_AGE", "DATABASE_URL")
    }
    code = (
        "from config import settings as s; d = s.DATABASES['default']; "
        "print(d['CONN_MAX_AGE'], d['CONN_HEALTH_CHECKS'])"
    ) + (f"; exec({env.pop('CODE')!r})" if "CODE" in env else "")
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**clean, "WAYPOINT_VAR_DIR": str(tmp_path), "SECRET_KEY": "s" * 50, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_reuses_database_connections_with_health_checks(tmp_path):
    result = database_settings(tmp_path, DEBUG="0")
    assert result.stdout.split() == ["60", "True"], result.stderr
    postgres = database_settings(tmp_path, DEBUG="0", DATABASE_URL="postgres://u@db:5432/w")
    assert postgres.stdout.split() == ["60", "True"], postgres.stderr


def test_development_opens_a_connection_per_request(tmp_path):
    result = database_settings(tmp_path, DEBUG="1")
    assert result.stdout.split() == ["0", "True"], result.stderr


def test_the_connection_age_is_a_setting(tmp_path):
    result = database_settings(tmp_path, DEBUG="0", WAYPOINT_CONN_MAX_AGE="300")
    assert result.stdout.split() == ["300", "True"], result.stderr
    result = database_settings(tmp_path, DEBUG="0", WAYPOINT_CONN_MAX_AGE="0")
    assert result.stdout.split() == ["0", "True"], result.stderr


def test_a_bad_connection_age_is_a_clear_error(tmp_path):
    result = database_settings(tmp_path, DEBUG="0", WAYPOINT_CONN_MAX_AGE="forever")
    assert result.returncode != 0
    assert "WAYPOINT_CONN_MAX_AGE must be an integer, got 'forever'" in result.stderr
    result = database_settings(tmp_path, DEBUG="0", WAYPOINT_CONN_MAX_AGE="-5")
    assert "WAYPOINT_CONN_MAX_AGE must be 0 or more seconds, got -5" in result.stderr


def test_a_bad_labels_cache_lifetime_is_a_clear_error(tmp_path):
    result = database_settings(tmp_path, DEBUG="0", WAYPOINT_LABELS_CACHE_S="-1")
    assert result.returncode != 0
    assert "WAYPOINT_LABELS_CACHE_S must be 0 or more seconds, got -1" in result.stderr


def s3_settings(monkeypatch, tmp_path) -> dict:
    """config/settings.py run afresh with a bucket named (``runpy``: Django's copy stays)."""
    monkeypatch.setenv("DEBUG", "1")
    monkeypatch.setenv("WAYPOINT_VAR_DIR", str(tmp_path))
    monkeypatch.setenv("AWS_STORAGE_BUCKET_NAME", "waypoint")
    return runpy.run_path(str(REPO / "config" / "settings.py"))


def test_a_bucket_keeps_blobs_in_s3(monkeypatch, tmp_path):
    storage = s3_settings(monkeypatch, tmp_path)["STORAGES"]["default"]
    assert storage["BACKEND"] == "storages.backends.s3.S3Storage"
    assert storage["OPTIONS"]["bucket_name"] == "waypoint"


def test_a_bucket_without_the_s3_extra_says_which_extra_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "boto3", None)  # `import boto3` fails
    with pytest.raises(ImproperlyConfigured) as caught:
        s3_settings(monkeypatch, tmp_path)
    assert str(caught.value) == "S3 storage needs the s3 extra: pip install 'waypoint[s3]'"


def session_settings(tmp_path, **env: str) -> subprocess.CompletedProcess:
    """The session engine, and the location of the cache it reads, from ``env``."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DEBUG", "SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL")
    }
    code = (
        "from config import settings as s; "
        "print(s.SESSION_ENGINE, s.CACHES.get('sessions', {}).get('LOCATION', '-'))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**clean, "WAYPOINT_VAR_DIR": str(tmp_path), "SECRET_KEY": "s" * 50, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_sessions_are_kept_in_the_database_without_a_redis(tmp_path):
    result = session_settings(tmp_path, DEBUG="0")
    assert result.stdout.split() == ["django.contrib.sessions.backends.db", "-"], result.stderr
    rabbit = session_settings(tmp_path, DEBUG="0", CELERY_BROKER_URL="amqp://mq:5672//")
    assert rabbit.stdout.split() == ["django.contrib.sessions.backends.db", "-"], rabbit.stderr


def test_sessions_are_read_from_the_brokers_redis_in_front_of_the_database(tmp_path):
    result = session_settings(tmp_path, DEBUG="0", CELERY_BROKER_URL="redis://redis:6379/0")
    assert result.stdout.split() == [
        "django.contrib.sessions.backends.cached_db",
        "redis://redis:6379/0",
    ], result.stderr


def test_redis_url_names_another_redis_or_none(tmp_path):
    broker = {"DEBUG": "0", "CELERY_BROKER_URL": "redis://redis:6379/0"}
    other = session_settings(tmp_path, **broker, REDIS_URL="redis://cache:6379/1")
    assert other.stdout.split() == [
        "django.contrib.sessions.backends.cached_db",
        "redis://cache:6379/1",
    ], other.stderr
    none = session_settings(tmp_path, **broker, REDIS_URL="")
    assert none.stdout.split() == ["django.contrib.sessions.backends.db", "-"], none.stderr


def test_a_redis_url_that_is_not_redis_is_a_clear_error(tmp_path):
    result = session_settings(tmp_path, DEBUG="0", REDIS_URL="memcached://cache:11211")
    assert result.returncode != 0
    assert (
        "REDIS_URL must be a redis://, rediss:// or unix:// URL, got 'memcached://cache:11211'"
        in result.stderr
    )

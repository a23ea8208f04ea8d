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


def test_check_deploy_is_clean_with_production_settings():
    result = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SECRET_KEY="a-long-random-production-secret-" + "x" * 40,
        ALLOWED_HOSTS="waypoint.example.org",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


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


def test_postgresql_prepares_statements_unless_a_pooler_forbids_them(tmp_path):
    code = "print(s.DATABASES['default'].get('OPTIONS', {}).get('prepare_threshold'))"
    url = {"DATABASE_URL": "postgres://u@db:5432/w", "DEBUG": "0"}
    result = database_settings(tmp_path, **url, CODE=code)
    assert result.stdout.split()[2:] == ["0"], result.stderr
    off = database_settings(tmp_path, **url, CODE=code, WAYPOINT_PREPARED_STATEMENTS="0")
    assert off.stdout.split()[2:] == ["None"], off.stderr


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

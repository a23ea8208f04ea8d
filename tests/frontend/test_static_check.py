"""With DEBUG off and static files never collected, every page would answer 500: a system
check says so first, in one line naming the command that fixes it."""

from __future__ import annotations

import pytest
from django.contrib.staticfiles.storage import ManifestStaticFilesStorage
from django.core.checks import run_checks
from django.test import override_settings

from config import settings as production

MANIFEST = "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"
PLAIN = "django.contrib.staticfiles.storage.StaticFilesStorage"


def static_errors(tmp_path, *, debug: bool = False, backend: str = MANIFEST) -> list[str]:
    storages = {**production.STORAGES, "staticfiles": {"BACKEND": backend}}
    with override_settings(DEBUG=debug, STATIC_ROOT=tmp_path, STORAGES=storages):
        return [f"{e.id}: {e.msg}" for e in run_checks() if e.id.startswith("frontend.")]


def test_a_missing_manifest_is_an_error_that_names_the_command(tmp_path):
    assert static_errors(tmp_path) == [
        "frontend.E001: static files are not collected: run `manage.py collectstatic "
        f"--noinput` (the manifest {tmp_path / 'staticfiles.json'} is missing)"
    ]


def test_a_collected_manifest_is_no_error(tmp_path):
    (tmp_path / "staticfiles.json").write_text('{"paths": {}, "version": "1.1"}')
    assert static_errors(tmp_path) == []


@pytest.mark.parametrize(
    "debug, backend",
    [
        (True, MANIFEST),  # with DEBUG on, pages name the files as they are in the apps
        (False, PLAIN),  # a storage without a manifest serves the files under their names
    ],
)
def test_nothing_to_collect_is_no_error(tmp_path, debug, backend):
    assert static_errors(tmp_path, debug=debug, backend=backend) == []


class CompressedManifestStorage(ManifestStaticFilesStorage):
    """As WhiteNoise's CompressedManifestStaticFilesStorage is: a manifest storage's subclass."""


def test_a_manifest_storage_s_subclass_is_checked_too(tmp_path):
    backend = f"{__name__}.CompressedManifestStorage"
    assert [e.split(":")[0] for e in static_errors(tmp_path, backend=backend)] == ["frontend.E001"]


def test_collectstatic_itself_does_not_run_the_check():
    """collectstatic runs the staticfiles checks before it writes the manifest."""
    from django.contrib.staticfiles.management.commands.collectstatic import Command
    from django.core.checks import registry

    checks = registry.registry.get_checks()
    ours = next(c for c in checks if c.__name__ == "static_files_are_collected")
    assert not set(ours.tags) & set(Command.requires_system_checks)

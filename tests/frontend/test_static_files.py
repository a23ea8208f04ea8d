"""In production, pages name static files by their content, so a deploy's changed JavaScript
and CSS reach browsers that keep static files for a year."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from config import settings as production
from tests.trajectories.builders import make_record
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db

STATIC = re.compile(r'"/static/([^"?]+)')
HASHED = re.compile(r"\.[0-9a-f]{12}\.\w+$")


@pytest.fixture
def collected(settings, tmp_path) -> Path:
    """collectstatic run into a folder with the production storage, as the Dockerfile does."""
    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {**settings.STORAGES, "staticfiles": production.STORAGES["staticfiles"]}
    call_command("collectstatic", "--noinput", verbosity=0)
    return tmp_path


def test_pages_name_static_files_by_their_content(collected, client, project, alice):
    trajectory, _ = do_import_trajectory(project, make_record(steps=1))
    client.force_login(alice)
    named = set()
    for url in (
        reverse("project-list"),
        reverse("trajectory-list", args=[project.pk]),
        reverse("annotate-workspace", args=[trajectory.pk]),
        reverse("api-docs"),
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        names = STATIC.findall(response.content.decode())
        assert names, url
        for name in names:
            assert HASHED.search(name), name
            assert (collected / name).is_file(), name
        named.update(names)
    plain = {re.sub(r"\.[0-9a-f]{12}(\.\w+)$", r"\1", name) for name in named}
    assert {
        "frontend/htmx.min.js",
        "trajectories/task_search.js",
        "annotate/workspace.js",
        "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js",
    } <= plain


def test_a_changed_file_gets_a_new_name(collected, settings):
    from django.contrib.staticfiles.storage import staticfiles_storage

    before = staticfiles_storage.url("frontend/waypoint.css")
    app = settings.BASE_DIR / "frontend" / "static" / "frontend" / "waypoint.css"
    changed = collected / "changed"
    (changed / "frontend").mkdir(parents=True)
    (changed / "frontend" / "waypoint.css").write_text(app.read_text() + "\n/* changed */\n")
    settings.STATICFILES_DIRS = [changed]  # found before the app's own copy
    settings.STATIC_ROOT = collected / "deployed"
    call_command("collectstatic", "--noinput", verbosity=0)
    after = staticfiles_storage.url("frontend/waypoint.css")
    assert HASHED.search(after) and after != before


def test_debug_names_the_apps_files_without_a_collectstatic(settings, tmp_path):
    from django.contrib.staticfiles.storage import staticfiles_storage

    settings.STATIC_ROOT = tmp_path  # empty: no manifest
    settings.STORAGES = {**settings.STORAGES, "staticfiles": production.STORAGES["staticfiles"]}
    settings.DEBUG = True
    assert staticfiles_storage.url("frontend/htmx.min.js") == "/static/frontend/htmx.min.js"

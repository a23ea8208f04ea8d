"""A suite document nested too deeply (1,000 or 100,000 levels) is refused as the other imports
refuse one (``trajectories.bounds.load_json``): a 400 from the API, whose JSON bodies are all
read by ``trajectories.parsers.JSONParser``, and a CommandError naming the file from
``manage.py suite import``."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from agents.models import Run, Suite

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(alice):
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(alice)
    return client


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_a_suite_nested_deeply_is_a_400(api, project, depth):
    for body in (nested(depth), '{"format": "waypoint-suite", "instances": ' + nested(depth) + "}"):
        answer = api.post(
            f"/api/v1/projects/{project.pk}/suites/", body, content_type="application/json"
        )
        assert (answer.status_code, answer.json()) == (
            400,
            {"detail": "JSON parse error - body: invalid JSON: nested too deeply"},
        )
    run = '{"agent": "solver", "seeds": ' + nested(depth) + "}"
    answer = api.post(f"/api/v1/projects/{project.pk}/runs/", run, content_type="application/json")
    assert (answer.status_code, answer.json()) == (
        400,
        {"detail": "JSON parse error - body: invalid JSON: nested too deeply"},
    )
    assert not Suite.objects.exists() and not Run.objects.exists()


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_the_command_refuses_a_suite_file_nested_deeply(project, tmp_path, depth):
    path = tmp_path / "deep.json"
    path.write_text('{"format": "waypoint-suite", "instances": ' + nested(depth) + "}")
    with pytest.raises(CommandError) as caught:
        call_command("suite", "import", str(path), "--project", str(project.pk))
    assert str(caught.value) == f"{path}: invalid JSON: nested too deeply"
    assert not Suite.objects.exists()


def test_the_command_says_a_file_is_no_json(project, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"format": ')
    with pytest.raises(CommandError) as caught:
        call_command("suite", "import", str(path), "--project", str(project.pk))
    assert str(caught.value) == (
        f"{path}: not a readable JSON file (Expecting value: line 1 column 12 (char 11))"
    )

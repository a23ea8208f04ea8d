"""In a project that hides its gold, nothing an annotator reads lets them work the gold out by
trying answers: suite documents (which carry the gold answers' SHA-256) are for its admins, a
run's instances name no digest, and a virtual task's uid ends in a digest keyed by the server's
secret, not a plain hash of the gold."""

from __future__ import annotations

import hashlib

import pytest
from rest_framework.test import APIClient

from agents.models import Run
from agents.services import do_make_suite
from devices.services.recording import _virtual_task_record
from devices.virtual import load_apps
from tests.agents.builders import finished_run
from trajectories.services import do_update_project

pytestmark = pytest.mark.django_db
CODE = "ava-door-code"


def api_as(user) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


@pytest.fixture
def hidden(project, alice):
    return do_update_project(project, alice, hide_gold=True)


def test_a_suite_document_is_for_the_admins_of_a_project_that_hides_its_gold(
    hidden, alice, bob, dave
):
    do_make_suite(hidden, alice, "doors", "1", [CODE], "1")
    url = f"/api/v1/projects/{hidden.pk}/suites/doors/1/"
    for user in (bob, dave):
        refused = api_as(user).get(url)
        assert (refused.status_code, refused.json()["detail"]) == (
            403,
            "this project hides gold answers: only its admins can export a suite (it carries "
            "the gold answers' digests)",
        )
    document = api_as(alice).get(url).json()
    gold = load_apps(1).task(CODE).gold
    assert document["instances"][0]["gold_sha256"] == hashlib.sha256(gold.encode()).hexdigest()


def test_a_run_s_instances_name_no_gold_digest_for_an_annotator(hidden, alice, bob):
    run = finished_run(hidden, alice, {(CODE, 1): "ok"})
    digest = hashlib.sha256(load_apps(1).task(CODE).gold.encode()).hexdigest()
    Run.objects.filter(pk=run.pk).update(
        instances=[{"template": CODE, "seed": 1, "gold_sha256": digest}]
    )
    seen = api_as(bob).get(f"/api/v1/runs/{run.pk}/")
    assert seen.json()["instances"] == [{"template": CODE, "seed": 1}]
    assert digest not in seen.content.decode()
    assert api_as(alice).get(f"/api/v1/runs/{run.pk}/").json()["instances"][0]["gold_sha256"]


def test_a_virtual_task_s_uid_is_no_plain_hash_of_its_gold(settings):
    item = {"id": CODE, "gold": "3547", "instruction": "What is Ava's door code?"}
    uid = _virtual_task_record({**item, "variables": []}).uid
    assert uid.startswith(f"virtual:{CODE}:") and len(uid.rsplit(":", 1)[1]) == 8
    tried = {hashlib.sha256(f"{n:04d}".encode()).hexdigest()[:8] for n in range(10_000)}
    assert uid.rsplit(":", 1)[1] not in tried
    assert _virtual_task_record({**item, "variables": []}).uid == uid  # stable on one server
    settings.SECRET_KEY = "another server's secret"
    assert _virtual_task_record({**item, "variables": []}).uid != uid

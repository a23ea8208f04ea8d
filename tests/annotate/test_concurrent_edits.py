"""Editors who save at the same moment get a save or a 409, never a server error."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.authtoken.models import Token

from tests.annotate.conftest import blank_record
from trajectories.models import Role, Status, Trajectory
from trajectories.services import do_import_trajectory, do_set_membership

EDITORS = 10
EDITS_EACH = 12


def patch(url: str, token: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="PATCH",
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        payload = exc.read()
        try:
            return exc.code, json.loads(payload)
        except ValueError:
            return exc.code, {}


@pytest.mark.django_db(transaction=True)
def test_concurrent_editors_get_a_save_or_a_409_never_a_500(live_server, project, alice):
    trajectory, _ = do_import_trajectory(project, blank_record(steps=6))
    Trajectory.objects.filter(pk=trajectory.pk).update(status=Status.ANNOTATING)
    tokens = []
    for n in range(EDITORS):
        editor = get_user_model().objects.create_user(f"editor{n}")
        do_set_membership(project, editor, Role.ADMIN, alice)
        tokens.append(Token.objects.create(user=editor).key)
    counts: Counter = Counter()
    lock = threading.Lock()
    start = threading.Barrier(EDITORS)

    def edit(n: int, token: str) -> None:
        version = Trajectory.objects.get(pk=trajectory.pk).version
        start.wait()
        for i in range(EDITS_EACH):
            url = f"{live_server.url}/api/v1/trajectories/{trajectory.pk}/step-labels/{i % 6}/"
            code, body = patch(url, token, {"version": version, "memory": f"{n}-{i}"})
            with lock:
                counts[code] += 1
            version = body.get("version", version)
        connection.close()

    threads = [threading.Thread(target=edit, args=(n, t)) for n, t in enumerate(tokens)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert set(counts) <= {200, 409}, counts
    assert counts[200] >= 1
    # Nothing lost: every accepted edit raised the version once.
    assert Trajectory.objects.get(pk=trajectory.pk).version == trajectory.version + counts[200]

"""The permission-checked getters answer 404 for an id no row can have, as for an outsider."""

from __future__ import annotations

import pytest
from django.http import Http404

from annotate.permissions import access_workspace_page
from tests.trajectories.builders import make_record
from trajectories.access import access_project, access_trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db

NO_ROW = ("x", None, "", 2**70, -(2**70))


@pytest.mark.parametrize("getter", [access_project, access_trajectory, access_workspace_page])
def test_it_answers_404_for_an_id_no_row_can_have(getter, project, alice):
    for value in NO_ROW:
        with pytest.raises(Http404):
            getter(alice, value)


def test_it_answers_404_for_a_huge_id_in_a_url(client, alice, project):
    trajectory, _ = do_import_trajectory(project, make_record(steps=1))
    client.force_login(alice)
    for url in (
        "/projects/{project}/trajectories/",
        "/trajectories/{trajectory}/workspace/",
        "/api/v1/trajectories/{trajectory}/",
        "/api/v1/projects/{project}/",
    ):
        found = url.format(project=project.pk, trajectory=trajectory.pk)
        assert client.get(found).status_code == 200, found
        huge = url.format(project="9" * 30, trajectory="9" * 30)
        assert client.get(huge).status_code == 404, huge

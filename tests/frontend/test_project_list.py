from __future__ import annotations

import pytest
from django.urls import reverse

from tests.trajectories.builders import make_record
from trajectories.models import AuditEvent, Membership, Project, Role
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


def test_it_lists_projects_with_trajectory_counts(client, project, alice, bob):
    do_import_trajectory(project, make_record(steps=2, seed=1))
    do_import_trajectory(project, make_record(steps=2, seed=2))
    for user in (alice, bob):
        client.force_login(user)
        response = client.get(reverse("project-list"))
        assert response.status_code == 200
        projects = list(response.context["projects"])
        assert [p.name for p in projects] == ["Shops"]
        assert projects[0].trajectory_count == 2
        assert reverse("trajectory-list", args=[project.pk]).encode() in response.content


def test_it_hides_other_projects_from_charlie(client, project, charlie):
    client.force_login(charlie)
    response = client.get(reverse("project-list"))
    assert response.status_code == 200
    assert list(response.context["projects"]) == []
    assert b"Shops" not in response.content


def test_it_creates_a_project(client, charlie):
    client.force_login(charlie)
    response = client.post(reverse("project-list"), {"name": "  Notes  ", "description": "d"})
    project = Project.objects.get(name="Notes")
    assert response.status_code == 302
    assert response["Location"] == reverse("trajectory-list", args=[project.pk])
    assert Membership.objects.get(project=project, user=charlie).role == Role.ADMIN
    assert AuditEvent.objects.filter(kind="project.created", project=project).exists()


def test_it_rejects_a_blank_project_name(client, charlie):
    client.force_login(charlie)
    response = client.post(reverse("project-list"), {"name": "   "})
    assert response.status_code == 200
    assert not Project.objects.exists()
    assert response.context["form"].errors

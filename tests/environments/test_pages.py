"""The environments pages: a project's generations with the form that starts one, a
generation's progress, report and environments, and the gallery of first screens; members see
them, outsiders get a 404."""

from __future__ import annotations

import pytest
from django.urls import reverse

from environments.models import EnvironmentStatus, GeneratedEnvironment, Generation, Stage
from trajectories.models import Job, JobKind

pytestmark = pytest.mark.django_db

REPORT = {
    "domain": "travel",
    "style": {"palette": {"primary": "#0d47a1"}, "density": "compact", "font": "x"},
    "memory_type": "code/answer",
    "answer": "join",
    "memory_items": 2,
    "layout_hash": "aaaa",
    "page_hashes": ["p1", "p2", "p3"],
    "memory": {"k": 5, "steps": 12, "needs_memory": True, "distances": {"a.x": 6, "a.y": 3}},
}


@pytest.fixture
def generation(project, alice):
    job = Job.objects.create(
        project=project, kind=JobKind.GENERATE, format="procedural", status="running", total=2
    )
    generation = Generation.objects.create(
        project=project, job=job, generator="procedural", seed=3, count=2, max_attempts=4,
        created_by=alice,
    )  # fmt: skip
    GeneratedEnvironment.objects.create(
        generation=generation, index=0, status=EnvironmentStatus.VERIFIED, stage=Stage.DONE,
        slug="gen-3-0000", label="TripNest", domain="travel", report=REPORT, seconds=4.2,
    )  # fmt: skip
    GeneratedEnvironment.objects.create(
        generation=generation, index=1, status=EnvironmentStatus.FAILED, stage=Stage.INSPECT,
        slug="gen-3-0001", label="CoinFlow", domain="banking",
        reason="select: a select element: filters must be buttons",
    )  # fmt: skip
    return generation


def test_a_member_sees_the_generations_progress_report_and_failures(client, bob, generation):
    client.force_login(bob)
    page = client.get(reverse("generation-detail", args=[generation.pk])).content.decode()
    assert '<b data-testid="verified">1</b> verified of 2' in page
    assert '<b data-testid="failed">1</b> failed' in page
    assert '<dd data-testid="layouts">1</dd>' in page
    assert "select: a select element: filters must be buttons" in page
    assert "Static inspection" in page and "TripNest" in page
    assert 'hx-trigger="every 2s' in page  # the job runs: the page keeps itself fresh
    listing = client.get(reverse("project-generations", args=[generation.project_id]))
    detail = reverse("generation-detail", args=[generation.pk])
    assert f'href="{detail}"' in listing.content.decode()
    gallery = client.get(reverse("generation-gallery", args=[generation.pk])).content.decode()
    assert "<b>TripNest</b> · travel" in gallery and "CoinFlow" not in gallery


def test_an_outsider_gets_a_404_for_every_page(client, charlie, generation):
    client.force_login(charlie)
    for name, arg in (
        ("generation-detail", generation.pk),
        ("generation-gallery", generation.pk),
        ("project-generations", generation.project_id),
    ):
        assert client.get(reverse(name, args=[arg])).status_code == 404


def test_the_form_says_what_is_wrong_with_a_request(client, alice, project):
    client.force_login(alice)
    page = client.post(
        reverse("project-generations", args=[project.pk]),
        {"count": 3, "seed": 1, "generator": "procedural", "domains": "space"},
    ).content.decode()
    assert "domains: unknown domain &#x27;space&#x27; (known: shopping, travel, banking" in page
    assert not Generation.objects.filter(project=project).exists()

"""A project that benchmarks keeps its gold (``hide_gold``): its gold answers and memory
variables reach its admins and site admins only, never its annotators or reviewers.

alice is the project's admin, bob an annotator, dave a reviewer. The project's one trajectory
has a task whose gold answer is GOLD-7Q3X, a screen on which the virtual device declared the
memory variable VAR-9K2M, and both in its metadata (as an import from elsewhere may carry them).
"""

from __future__ import annotations

import dataclasses
import gzip
import re
import zipfile
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient

from agents.models import Episode, EpisodeStatus, Run
from formats.catalogue import EXPORTERS, export_trajectories
from tests.trajectories.builders import make_record
from trajectories import events
from trajectories.gold import GOLD_FORMATS
from trajectories.models import AnchorLink, AuditEvent, Job, JobKind, JobStatus, Project, Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db

GOLD = "GOLD-7Q3X"
VARIABLE = "VAR-9K2M"
SECRETS = (GOLD.encode(), VARIABLE.encode())


def benchmark_record():
    record = make_record(steps=2, seed=11)
    task = dataclasses.replace(
        record.task,
        uid="virtual:door-code:0000beef",
        goal="Find the door code of the flat",
        gold_answer=GOLD,
        memory_items=[{"key": "keys.door_code", "description": "the code", "where": "Keys"}],
    )
    variable = {
        "app": "keys",
        "package": "com.waypoint.keys",
        "name": "door_code",
        "ref": "keys.door_code",
        "value": VARIABLE,
        "text": VARIABLE,
        "bounds": [10, 100, 110, 140],
    }
    screens = [dataclasses.replace(s, visible_memory=[variable]) for s in record.screens]
    metadata = {
        "virtual_device": {"seed": 1, "apps": [], "reset": True, "variables": {"x": VARIABLE}},
        "virtual_task": "door-code",
        "gold": GOLD,
        "answer": "what the recorder answered",
    }
    return dataclasses.replace(record, task=task, screens=screens, metadata=metadata)


def export_job(project, user, fmt: str) -> Job:
    """A succeeded export whose file names the gold answer."""
    path = default_storage.save(f"exports/{fmt}-test.zip", ContentFile(b"PK " + GOLD.encode()))
    return Job.objects.create(
        project=project,
        kind=JobKind.EXPORT,
        format=fmt,
        created_by=user,
        status=JobStatus.SUCCEEDED,
        output_path=path,
    )


@pytest.fixture
def benchmark(project, alice, dave):
    Project.objects.filter(pk=project.pk).update(hide_gold=True)
    project.refresh_from_db()
    trajectory, _ = do_import_trajectory(project, benchmark_record())
    job = Job.objects.create(project=project, kind=JobKind.AGENT_RUN, format="random")
    run = Run.objects.create(
        project=project,
        job=job,
        created_by=alice,
        agent_spec="random",
        agent="random",
        instances=[{"template": "door-code", "seed": 1}],
    )
    episode = Episode.objects.create(
        run=run,
        template="door-code",
        seed=1,
        status=EpisodeStatus.FINISHED,
        success=False,
        failure_kind="wrong_answer",
        answer="1234",
        trajectory=trajectory,
    )
    return {
        "project": project,
        "trajectory": trajectory,
        "run": run,
        "episode": episode,
        "job": export_job(project, alice, "memory-world"),
    }


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def body_of(response) -> bytes:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return response.content


# ---------------------------------------------------------------- every page and GET endpoint


def url_patterns(resolvers=None, prefix: str = ""):
    """(route, name, converters) of every URL pattern, its prefixes joined."""
    for entry in resolvers if resolvers is not None else get_resolver().url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from url_patterns(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            yield route, entry.name, list(entry.pattern.converters)


# Patterns that are no page of a project's data: Django's admin, static files, the schema.
NOT_PROJECT_DATA = ("admin/", "static/", "media/", "__debug__/")
# Device pages connect to the device (the console's own tests drive the virtual device).
WITH_A_DEVICE = ("serial",)


def fill(route: str, name: str | None, converters: list[str], ids: dict) -> str | None:
    """The URL of a pattern with the fixture's ids, or None when it names something else."""
    if name is None or route.startswith(NOT_PROJECT_DATA) or "logout" in name:
        return None
    if any(c in WITH_A_DEVICE for c in converters):
        return None
    if not all(c in ids for c in converters):
        return None
    try:
        return reverse(name, kwargs={c: ids[c] for c in converters})
    except Exception:  # a pattern whose name another pattern's route shadows, or a regex
        return None


@pytest.fixture
def ids(benchmark, bob):
    trajectory = benchmark["trajectory"]
    screen = trajectory.screens.order_by("pk").first()
    return {
        "project_id": benchmark["project"].pk,
        "trajectory_id": trajectory.pk,
        "task_id": trajectory.task_id,
        "job_id": benchmark["job"].pk,
        "run_id": benchmark["run"].pk,
        "episode_id": benchmark["episode"].pk,
        "index": 0,
        "user_id": bob.pk,
        "sha256": screen.screenshot_id,
        # The labels: annotators' own work, shown as it is.
        "subgoal_id": trajectory.subgoals.first().pk,
        "target_id": trajectory.memory_targets.first().pk,
        "key": trajectory.anchors.first().key,
        "link_id": AnchorLink.objects.filter(source__trajectory=trajectory).first().pk,
    }


def readable_urls(ids) -> list[str]:
    urls = []
    for route, name, converters in url_patterns():
        url = fill(route, name, converters, ids)
        if url is not None and url not in urls:
            urls.append(url)
    return urls


def test_the_walk_covers_the_pages_and_endpoints_that_show_gold(ids):
    urls = readable_urls(ids)
    trajectory, project = ids["trajectory_id"], ids["project_id"]
    for expected in (
        f"/api/v1/projects/{project}/tasks/",
        f"/api/v1/tasks/{ids['task_id']}/",
        f"/api/v1/trajectories/{trajectory}/",
        f"/api/v1/trajectories/{trajectory}/steps/",
        f"/api/v1/trajectories/{trajectory}/steps/0/",
        f"/trajectories/{trajectory}/",
        f"/trajectories/{trajectory}/steps/0/",
        f"/projects/{project}/export/",
        f"/api/v1/runs/{ids['run_id']}/",
        f"/runs/{ids['run_id']}/",
        f"/jobs/{ids['job_id']}/download/",
        f"/api/v1/jobs/{ids['job_id']}/download/",
    ):
        assert expected in urls
    assert len(urls) > 40


@pytest.mark.parametrize("member", ["bob", "dave"])
def test_no_page_or_endpoint_shows_gold_or_variables_to_an_annotator_or_reviewer(
    request, ids, member
):
    client = client_of(request.getfixturevalue(member))
    seen = {}
    for url in readable_urls(ids):
        response = client.get(url)
        assert response.status_code < 500, url
        body = body_of(response)
        for secret in SECRETS:
            assert secret not in body, f"{member} sees {secret.decode()} on {url}"
        seen[url] = response.status_code
    # The pages that would show it are shown, without it.
    trajectory = ids["trajectory_id"]
    for url in (f"/api/v1/trajectories/{trajectory}/", f"/trajectories/{trajectory}/"):
        assert seen[url] == 200


def test_the_admin_sees_gold_and_variables_on_the_same_walk(ids, alice):
    client = client_of(alice)
    showing: dict[bytes, set[str]] = {secret: set() for secret in SECRETS}
    for url in readable_urls(ids):
        body = body_of(client.get(url))
        for secret in SECRETS:
            if secret in body:
                showing[secret].add(url)
    trajectory, project = ids["trajectory_id"], ids["project_id"]
    assert {
        f"/api/v1/projects/{project}/tasks/",
        f"/api/v1/tasks/{ids['task_id']}/",
        f"/api/v1/trajectories/{trajectory}/",
        f"/trajectories/{trajectory}/",
        f"/jobs/{ids['job_id']}/download/",
    } <= showing[GOLD.encode()]
    assert {
        f"/api/v1/trajectories/{trajectory}/",
        f"/api/v1/trajectories/{trajectory}/steps/",
    } <= showing[VARIABLE.encode()]


def test_a_site_admin_outside_the_roles_sees_the_gold(benchmark, django_user_model):
    root = django_user_model.objects.create_superuser("root", "root@example.org", "pw")
    response = client_of(root).get(f"/api/v1/projects/{benchmark['project'].pk}/tasks/")
    assert response.json()["results"][0]["gold_answer"] == GOLD


def test_what_an_annotator_sees_instead(benchmark, bob):
    trajectory = benchmark["trajectory"]
    client = client_of(bob)
    task = client.get(f"/api/v1/tasks/{trajectory.task_id}/").json()
    assert task["gold_answer"] is None
    assert task["memory_items"] == [
        {"key": "keys.door_code", "description": "the code", "where": "Keys"}
    ]
    detail = client.get(f"/api/v1/trajectories/{trajectory.pk}/").json()
    assert detail["metadata"] == {
        "virtual_device": {"seed": 1, "apps": [], "reset": True},
        "virtual_task": "door-code",
        "answer": "what the recorder answered",
    }
    assert detail["final_screen"]["visible_memory"] == [
        {
            "app": "keys",
            "package": "com.waypoint.keys",
            "name": "door_code",
            "ref": "keys.door_code",
            "bounds": [10, 100, 110, 140],
        }
    ]
    assert client.get(f"/api/v1/projects/{benchmark['project'].pk}/").json()["hide_gold"] is True
    page = client.get(f"/trajectories/{trajectory.pk}/").content.decode()
    assert re.search(r'<dt>Gold answer</dt><dd class="muted" id="gold-hidden"[^>]*>hidden', page)


def test_without_hide_gold_every_member_sees_the_gold_as_before(benchmark, bob):
    project = benchmark["project"]
    Project.objects.filter(pk=project.pk).update(hide_gold=False)
    client = client_of(bob)
    assert (
        client.get(f"/api/v1/projects/{project.pk}/tasks/").json()["results"][0]["gold_answer"]
        == GOLD
    )
    trajectory = benchmark["trajectory"]
    assert GOLD.encode() in client.get(f"/trajectories/{trajectory.pk}/").content
    steps = client.get(f"/api/v1/trajectories/{trajectory.pk}/steps/").json()
    assert steps[0]["screen"]["visible_memory"][0]["value"] == VARIABLE
    assert client.get(f"/api/v1/jobs/{benchmark['job'].pk}/download/").status_code == 200


# ---------------------------------------------------------------- exports

HIDDEN = "this project hides gold answers: only its admins can {} {} (it carries them)"


@pytest.mark.parametrize("fmt", sorted(GOLD_FORMATS))
def test_an_annotator_cannot_export_a_format_that_carries_gold(benchmark, bob, fmt):
    project = benchmark["project"]
    api = APIClient()
    api.force_authenticate(bob)
    jobs = Job.objects.count()
    response = api.post(f"/api/v1/projects/{project.pk}/exports/", {"format": fmt}, format="json")
    assert (response.status_code, response.json()) == (
        403,
        {"detail": HIDDEN.format("export", fmt)},
    )
    page = client_of(bob).post(f"/projects/{project.pk}/export/", {"format": fmt})
    assert page.status_code == 403
    assert HIDDEN.format("export", fmt) in page.content.decode()
    assert Job.objects.count() == jobs  # nothing queued


def test_the_admin_exports_it_and_formats_without_gold_stay_open(benchmark, alice, bob):
    project = benchmark["project"]
    url = f"/api/v1/projects/{project.pk}/exports/"
    for user, fmt in ((alice, "memory-world"), (alice, "waypoint"), (bob, "stamp-sft")):
        api = APIClient()
        api.force_authenticate(user)
        assert api.post(url, {"format": fmt}, format="json").status_code == 202, (user, fmt)
    page = client_of(bob).get(f"/projects/{project.pk}/export/").content.decode()
    assert "Memory-World (tasks with memory items) — admins only" in page
    assert "STAMP SFT (ms-swift / LLaMA-Factory chat samples)</option>" in page


def test_an_annotator_can_neither_download_nor_rerun_an_admins_gold_export(benchmark, bob):
    job = benchmark["job"]
    api = APIClient()
    api.force_authenticate(bob)
    response = api.get(f"/api/v1/jobs/{job.pk}/download/")
    assert (response.status_code, response.json()) == (
        403,
        {"detail": HIDDEN.format("download", "memory-world")},
    )
    assert client_of(bob).get(f"/jobs/{job.pk}/download/").status_code == 403
    Job.objects.filter(pk=job.pk).update(status=JobStatus.FAILED)
    response = api.post(f"/api/v1/jobs/{job.pk}/retry/")
    assert (response.status_code, response.json()) == (
        403,
        {"detail": HIDDEN.format("export", "memory-world")},
    )
    assert Job.objects.get(pk=job.pk).status == JobStatus.FAILED
    open_job = export_job(benchmark["project"], bob, "stamp-sft")
    assert api.get(f"/api/v1/jobs/{open_job.pk}/download/").status_code == 200


def test_the_gold_formats_are_exactly_those_whose_files_carry_gold(benchmark, tmp_path):
    """Every export format is written; a format whose files hold the gold answer or a variable
    must be in GOLD_FORMATS, and one in GOLD_FORMATS must hold them (else it is closed for no
    reason)."""
    trajectories = Trajectory.objects.filter(pk=benchmark["trajectory"].pk)
    carrying = set()
    for fmt in EXPORTERS:
        dest = tmp_path / fmt
        export_trajectories(trajectories, dest, fmt)
        if any(secret in content for content in contents(dest) for secret in SECRETS):
            carrying.add(fmt)
    assert carrying == set(GOLD_FORMATS)


def contents(folder: Path):
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if zipfile.is_zipfile(path):
                with zipfile.ZipFile(path) as archive:
                    yield from (archive.read(n) for n in archive.namelist())
            elif data[:2] == b"\x1f\x8b":  # a GZIP TFRecord shard (aitw, androidcontrol-tfrecord)
                yield gzip.decompress(data)
            else:
                yield data


# ---------------------------------------------------------------- the setting


def test_only_the_projects_admins_turn_the_setting_on_or_off(project, alice, bob):
    url = f"/api/v1/projects/{project.pk}/"
    api = APIClient()
    api.force_authenticate(bob)
    assert api.patch(url, {"hide_gold": True}, format="json").status_code == 403
    assert (
        client_of(bob).post(f"/projects/{project.pk}/settings/", {"hide_gold": "1"}).status_code
        == 403
    )
    assert Project.objects.get(pk=project.pk).hide_gold is False
    api.force_authenticate(alice)
    response = api.patch(url, {"hide_gold": True}, format="json")
    assert (response.status_code, response.json()["hide_gold"]) == (200, True)
    event = AuditEvent.objects.get(kind=events.PROJECT_SETTINGS_CHANGED)
    assert (event.before, event.after) == ({"hide_gold": False}, {"hide_gold": True})
    assert api.patch(url, {"hide_gold": "maybe"}, format="json").status_code == 400
    # The members page: a form for admins; the checkbox left out turns it off.
    page = client_of(alice).get(f"/projects/{project.pk}/members/").content.decode()
    assert "Hide gold answers and memory variables from annotators and reviewers" in page
    assert 'id="hide-gold" value="1" checked' in page
    response = client_of(alice).post(f"/projects/{project.pk}/settings/", {})
    assert response.status_code == 302
    assert Project.objects.get(pk=project.pk).hide_gold is False

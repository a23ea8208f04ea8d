"""Building the subgoal memory graph (paper §3.2) from generated trajectories."""

from __future__ import annotations

import numpy as np
import pytest

from graphs.build import (
    EdgeInput,
    GraphBuilder,
    TrajectoryInput,
    check_params,
)
from graphs.index import load_graph
from graphs.models import ScreenEmbedding
from graphs.services import do_build_memory_graph
from tests.graphs.conftest import build_now, import_generated, purity_and_completeness
from trajectories.models import Subgoal, Trajectory
from trajectories.validation import InvalidData, InvalidRequest


@pytest.mark.django_db
def test_the_default_embedder_merges_screens_of_a_page_and_separates_pages(
    project, alice, generated, django_capture_on_commit_callbacks
):
    graph = build_now(project, alice, django_capture_on_commit_callbacks)
    assert (graph.status, graph.job.status) == ("ready", "succeeded"), graph.message
    data = load_graph(graph)
    purity, completeness = purity_and_completeness(data.members)
    assert purity >= 0.95 and completeness >= 0.95, (purity, completeness)
    # The pages of the demo apps, not one node per screenshot.
    assert graph.node_count <= 8 < sum(len(m) for m in data.members)
    assert graph.job.counts == {
        "nodes": graph.node_count,
        "edges": graph.edge_count,
        "trajectories": 6,
    }
    assert graph.inputs["trajectories"] == [str(t.uid) for t in generated]


@pytest.mark.django_db
def test_each_edge_is_a_subgoal_from_its_first_screen_to_the_screen_after_its_last_step(
    project, alice, generated, django_capture_on_commit_callbacks
):
    graph = build_now(project, alice, django_capture_on_commit_callbacks, {"theta": 1.0})
    data = load_graph(graph)
    node_of = {
        (m["trajectory"], m["step"]): node for node, ms in enumerate(data.members) for m in ms
    }
    subgoals = Subgoal.objects.filter(trajectory__in=generated)
    # θ = 1 keeps every subgoal: no cosine exceeds 1.
    assert graph.edge_count == subgoals.count()
    first = Subgoal.objects.filter(trajectory=generated[0]).order_by("start")[0]
    edge = next(e for e in data.edges if e["trajectory"] == str(generated[0].uid))
    key = str(generated[0].uid)
    assert (edge["intent"], edge["start"], edge["end"]) == (first.text, first.start, first.end)
    assert edge["source"] == node_of[(key, first.start)]
    assert edge["target"] == node_of[(key, first.end + 1)]
    assert edge["success"] == (first.success or "uncertain")


@pytest.mark.django_db
def test_duplicate_subgoals_are_dropped_and_remembered_on_the_kept_edge(
    project, alice, generated, django_capture_on_commit_callbacks
):
    every = build_now(project, alice, django_capture_on_commit_callbacks, {"theta": 1.0})
    deduplicated = build_now(project, alice, django_capture_on_commit_callbacks, {"theta": 0.9})
    data = load_graph(deduplicated)
    assert deduplicated.edge_count < every.edge_count
    dropped = sum(len(edge["duplicates"]) for edge in data.edges)
    assert deduplicated.edge_count + dropped == every.edge_count
    seen = set()
    for edge in data.edges:  # no two kept edges are duplicates of each other
        key = (edge["source"], edge["target"], edge["success"], edge["intent"])
        assert key not in seen
        seen.add(key)
    assert deduplicated.version == every.version + 1


@pytest.mark.django_db
def test_an_extended_graph_equals_a_full_build_of_the_same_trajectories(
    project, alice, django_capture_on_commit_callbacks
):
    import_generated(project, range(3))
    first = build_now(project, alice, django_capture_on_commit_callbacks)
    import_generated(project, range(3, 6))
    extended = build_now(project, alice, django_capture_on_commit_callbacks, extend=first)
    full = build_now(project, alice, django_capture_on_commit_callbacks)
    assert extended.parent == first
    assert extended.inputs["added"] == full.inputs["trajectories"][3:]
    assert extended.inputs["trajectories"] == full.inputs["trajectories"]
    a, b = load_graph(extended), load_graph(full)
    assert a.members == b.members and a.edges == b.edges
    assert np.array_equal(a.sums, b.sums) and np.array_equal(a.counts, b.counts)
    assert np.array_equal(a.edge_vectors, b.edge_vectors)
    assert extended.job.total == 3  # only the new trajectories were read
    with pytest.raises(InvalidData, match="already holds every trajectory matching"):
        do_build_memory_graph(project, alice, extend=extended)
    with pytest.raises(InvalidData, match="an extension keeps the graph's tau"):
        do_build_memory_graph(project, alice, {"tau": 0.5}, extend=first)
    import_generated(project, [6])
    again = build_now(project, alice, django_capture_on_commit_callbacks, {"k": 4}, extend=extended)
    assert again.params == {**extended.params, "k": 4}
    assert again.inputs["added"] == [again.inputs["trajectories"][-1]]


@pytest.mark.django_db
def test_flat_structure_merges_nothing_and_granularities_make_their_edges(
    project, alice, generated, django_capture_on_commit_callbacks
):
    build = lambda **p: build_now(project, alice, django_capture_on_commit_callbacks, p)  # noqa: E731
    graph, flat = build(), build(structure="flat")
    flat_data = load_graph(flat)
    assert all(len(members) == 1 for members in flat_data.members)
    assert flat.node_count > graph.node_count
    action = build(granularity="action", theta=1.0)
    assert action.edge_count == sum(t.step_count for t in generated)
    task = build(granularity="task", theta=1.0)
    task_data = load_graph(task)
    assert task.edge_count == len(generated)
    assert {e["intent"] for e in task_data.edges} == {t.task.goal for t in generated}
    assert {e["success"] for e in task_data.edges} == {"yes"}  # generated ones succeed


@pytest.mark.django_db
def test_embeddings_are_computed_once_per_screen_and_embedder(
    project, alice, generated, django_capture_on_commit_callbacks
):
    build_now(project, alice, django_capture_on_commit_callbacks)
    cached = ScreenEmbedding.objects.count()
    assert cached > 0
    assert set(ScreenEmbedding.objects.values_list("embedder", flat=True)) == {"structure"}
    build_now(project, alice, django_capture_on_commit_callbacks, {"tau": 0.8})
    assert ScreenEmbedding.objects.count() == cached


@pytest.mark.django_db
def test_bad_parameters_and_empty_inputs_get_clear_errors(project, alice, generated):
    cases = [
        ({"tau": 1.5}, InvalidData, "tau: must be between 0 and 1, got 1.5"),
        ({"theta": -0.2}, InvalidData, "theta: must be between 0 and 1, got -0.2"),
        ({"tau": "high"}, InvalidRequest, "tau: must be a number, got 'high'"),
        ({"k": 0}, InvalidData, "k: must be between 1 and 100, got 0"),
        ({"embedder": "clip"}, InvalidData, "embedder: unknown embedder 'clip'"),
        ({"structure": "tree"}, InvalidData, "structure: unknown structure 'tree'"),
        ({"granularity": "step"}, InvalidData, "granularity: unknown granularity 'step'"),
        ({"alpha": 1}, InvalidRequest, "params: unknown parameter 'alpha'"),
    ]
    for params, error, message in cases:
        with pytest.raises(error, match=message.replace("(", r"\(")):
            do_build_memory_graph(project, alice, params)
    Trajectory.objects.filter(project=project).update(status="annotating")  # none approved
    with pytest.raises(
        InvalidData,
        match=r"the project has no labelled trajectories \(with subgoals\) "
        r"matching status=approved",
    ):
        do_build_memory_graph(project, alice, approved_only=True)
    with pytest.raises(InvalidRequest, match="filters: unknown filter 'colour'"):
        do_build_memory_graph(project, alice, filters={"colour": "red"})
    with pytest.raises(InvalidRequest, match="'rejected' contradicts approved_only"):
        do_build_memory_graph(project, alice, filters={"status": "rejected"}, approved_only=True)


def test_a_screen_joins_the_node_whose_running_mean_is_within_tau():
    """The builder on hand-made vectors: (1,0) and (0.8,0.6) merge at τ 0.75; (0,1) then has
    cosine 0.32 with the node's mean (0.9,0.3)/|…| and starts a node of its own."""
    params = check_params({"tau": 0.75})
    builder = GraphBuilder(params, {"name": "structure"}, dim=2, text_dim=2)
    vectors = {0: [1, 0], 1: [0.8, 0.6], 2: [0, 1]}
    item = TrajectoryInput(
        key="t",
        task="task",
        screens={("t", i): (f"sha{i}", np.array(v, dtype=np.float32)) for i, v in vectors.items()},
        edges=[
            EdgeInput(("t", 0), ("t", 1), "open the list", "yes", trajectory="t", end=0),
            EdgeInput(("t", 1), ("t", 2), "open an item", "no", trajectory="t", start=1, end=1),
        ],
    )
    text = {
        "open the list": np.array([1, 0], np.float32),
        "open an item": np.array([0, 1], np.float32),
    }
    builder.add_trajectory(item, text)
    graph = builder.graph()
    assert [len(m) for m in graph.members] == [2, 1]
    assert [(e["source"], e["target"], e["success"]) for e in graph.edges] == [
        (0, 0, "yes"),
        (0, 1, "no"),
    ]
    assert graph.counts.tolist() == [2, 1]


@pytest.mark.django_db
def test_the_command_builds_and_extends_here_with_now(project, generated):
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    call_command("build_memory_graph", "--project", str(project.pk), "--now", stdout=out)
    assert out.getvalue().startswith("graph v1: ")
    with pytest.raises(CommandError, match="already holds every trajectory"):
        call_command("build_memory_graph", "--project", str(project.pk), "--extend", "1")
    with pytest.raises(CommandError, match="tau: must be between 0 and 1, got 3"):
        call_command("build_memory_graph", "--project", str(project.pk), "--tau", "3")


@pytest.mark.django_db
def test_a_build_whose_trajectory_went_away_fails_with_the_reason(
    project, alice, generated, django_capture_on_commit_callbacks
):
    from trajectories.jobs import run_job

    with django_capture_on_commit_callbacks(execute=False):
        graph = do_build_memory_graph(project, alice)
    gone = generated[2]
    gone_uid = str(gone.uid)
    gone.delete()
    run_job(graph.job_id)
    graph.refresh_from_db()
    graph.job.refresh_from_db()
    message = f"trajectory {gone_uid} was deleted before the build ran"
    assert (graph.status, graph.message) == ("failed", message)
    assert (graph.job.status, graph.job.message) == ("failed", message)
    assert not graph.file


@pytest.mark.django_db
def test_a_build_that_fails_unforeseen_names_the_kind_of_error_without_its_paths(
    project, alice, generated, django_capture_on_commit_callbacks, monkeypatch
):
    from trajectories.jobs import run_job

    def disk_full(graph, progress):
        raise OSError(28, "No space left on device", "/srv/waypoint/var/jobs-tmp/7/graph.npz")

    monkeypatch.setattr("graphs.services._build", disk_full)
    with django_capture_on_commit_callbacks(execute=False):
        graph = do_build_memory_graph(project, alice)
    run_job(graph.job_id)
    graph.refresh_from_db()
    graph.job.refresh_from_db()
    message = f"internal error (OSError); the worker's log has the details (job {graph.job_id})"
    assert (graph.status, graph.message) == ("failed", message)
    assert (graph.job.status, graph.job.message) == ("failed", message)


@pytest.mark.usefixtures("celery_worker")
@pytest.mark.django_db(transaction=True)
def test_a_celery_worker_builds_the_graph(project, alice):
    from tests.conftest import wait_for_job

    import_generated(project, range(2))
    graph = do_build_memory_graph(project, alice)
    job = wait_for_job(graph.job_id)
    graph.refresh_from_db()
    assert (job.status, graph.status) == ("succeeded", "ready"), job.message
    assert (job.done, job.total) == (2, 2)
    assert graph.node_count > 0 and load_graph(graph).trajectories == graph.inputs["trajectories"]


@pytest.mark.django_db
def test_an_extension_after_labels_changed_is_built_again_from_every_trajectory(
    project, alice, client, django_capture_on_commit_callbacks
):
    from trajectories.labels import edits
    from trajectories.models import Trajectory

    import_generated(project, range(3))
    first = build_now(project, alice, django_capture_on_commit_callbacks)
    assert set(first.inputs["versions"]) == set(first.inputs["trajectories"])
    import_generated(project, range(3, 5))
    # Unchanged labels: the extension reads only the new trajectories.
    extended = build_now(project, alice, django_capture_on_commit_callbacks, extend=first)
    assert extended.job.total == 2 and "rebuilt" not in extended.inputs
    # A subgoal of a trajectory the graph holds is merged into its neighbour.
    changed = Trajectory.objects.get(uid=first.inputs["trajectories"][1])
    subgoal = Subgoal.objects.filter(trajectory=changed).order_by("start").first()
    edits.do_merge_subgoals(changed, alice, changed.version, subgoal.pk)
    import_generated(project, [5])
    rebuilt = build_now(project, alice, django_capture_on_commit_callbacks, extend=extended)
    full = build_now(project, alice, django_capture_on_commit_callbacks)
    assert rebuilt.inputs["rebuilt"] == [str(changed.uid)]
    assert rebuilt.inputs["trajectories"] == full.inputs["trajectories"]
    assert rebuilt.job.total == 6  # every trajectory read again
    a, b = load_graph(rebuilt), load_graph(full)
    assert a.members == b.members and a.edges == b.edges
    assert np.array_equal(a.edge_vectors, b.edge_vectors)
    client.force_login(alice)
    page = client.get(f"/projects/{project.pk}/graphs/").content.decode()
    assert f"rebuilt from v{extended.version}, 1 changed" in page
    assert f"The labels of 1 trajectory of v{extended.version} changed since" in page

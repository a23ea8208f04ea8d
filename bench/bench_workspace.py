"""How fast the annotation workspace renders and saves: `python bench/bench_workspace.py`.

A generated 65-step trajectory gets 10 subgoals, 20 anchors (with links) and memory targets;
then, in-process through Django's test client (server time, no network):

- the workspace page: median of 20 renders, and its query count for 20, 65 and 130 steps
  (it must not grow with steps);
- an autosaved edit (a subgoal's text, then a step's memory text): median of 20 round trips.

Targets: render <= 60 ms, edit <= 50 ms. Uses a throwaway SQLite database and blob folder
unless DATABASE_URL is set.
"""

from __future__ import annotations

import statistics
import sys
import time

from scratch import scratch_django  # bench/scratch.py, beside this script

RENDER_TARGET_MS = 60
EDIT_TARGET_MS = 50
RUNS = 20


def setup() -> None:
    scratch_django("waypoint-bench-ws-")


def labelled_trajectory(project, user, steps: int, seed: int):
    from fixtures.generate import generate_record
    from trajectories.labels import edits
    from trajectories.models import Anchor, AnchorLink, MemoryTarget, Subgoal, Trajectory
    from trajectories.services import do_import_trajectory

    t, _ = do_import_trajectory(project, generate_record(seed, steps=steps))
    Trajectory.objects.filter(pk=t.pk).update(status="annotating")
    t.refresh_from_db()
    Subgoal.objects.filter(trajectory=t).delete()
    Anchor.objects.filter(trajectory=t).delete()
    MemoryTarget.objects.filter(trajectory=t).delete()
    cuts = [round(i * steps / 10) for i in range(11)]
    Subgoal.objects.bulk_create(
        Subgoal(trajectory=t, start=a, end=b - 1, text=f"subgoal {i}", success="yes")
        for i, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False))
        if b > a
    )
    anchors = Anchor.objects.bulk_create(
        Anchor(
            trajectory=t,
            key=f"a{i + 1}",
            step_index=min(steps - 1, i * steps // 20),
            type=["subgoal", "state_change", "dependency", "context_info", "exception", "finish"][
                i % 6
            ],
            content=f"anchor {i + 1}",
            evidence={"bounds": [10, 100, 200, 160]},
        )
        for i in range(20)
    )
    AnchorLink.objects.bulk_create(
        AnchorLink(source=a, target=b, relation="enables", critical=i % 3 == 0)
        for i, (a, b) in enumerate(zip(anchors, anchors[1:], strict=False))
    )
    for i in range(4):
        edits.do_add_memory_target(
            t,
            user,
            t.version,
            key=f"value{i}",
            value=str(i),
            encode_step=i * 5,
            retrieve_steps=[steps - 1 - i],
            evidence={"bounds": [0, 0, 50, 50]},
        )
    t.refresh_from_db()
    return t


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from trajectories.models import Trajectory
    from trajectories.services import do_create_project

    user = get_user_model().objects.create_user("bench")
    project = do_create_project("Bench", user)
    client = Client()
    client.force_login(user)

    queries = {}
    for steps, seed in ((20, 1), (65, 2), (130, 3)):
        t = labelled_trajectory(project, user, steps, seed)
        url = f"/trajectories/{t.pk}/workspace/?step={steps // 2}"
        assert client.get(url).status_code == 200
        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        queries[steps] = len(captured)
        if steps == 65:
            main_t = t
    t = main_t
    url = f"/trajectories/{t.pk}/workspace/?step=30"
    page = client.get(url)
    renders = [timed(lambda: client.get(url)) for _ in range(RUNS)]
    partial = [timed(lambda: client.get(url, HTTP_HX_REQUEST="true")) for _ in range(RUNS)]

    subgoal = t.subgoals.order_by("start")[3]
    edit_url = f"/trajectories/{t.pk}/workspace/"

    def save(op: str, **data) -> None:
        version = Trajectory.objects.values_list("version", flat=True).get(pk=t.pk)
        response = client.post(
            edit_url + op + "/", {"version": version, "step": 30, **data}, HTTP_HX_REQUEST="true"
        )
        assert response.status_code == 200, response.content[:300]

    subgoal_edits = [
        timed(lambda i=i: save("subgoal", subgoal=subgoal.pk, text=f"intent {i}"))
        for i in range(RUNS)
    ]
    step_edits = [
        timed(lambda i=i: save("step", memory=f"memory {i}", trainable_present="1", trainable="on"))
        for i in range(RUNS)
    ]
    splits = []
    for _ in range(RUNS // 2):  # a structural edit (re-renders the panels) and its undo
        splits.append(timed(lambda: save("split", at=31)))
        splits.append(timed(lambda: save("undo")))

    render_ms, edit_ms = statistics.median(renders), statistics.median(subgoal_edits)
    print(
        f"workspace, 65 steps, 10 subgoals, 20 anchors, 19 links, 4 memory targets "
        f"({len(page.content) // 1024} KiB of HTML)"
    )
    print(f"  full page render      median {render_ms:6.1f} ms  (target <= {RENDER_TARGET_MS})")
    print(f"  step switch (htmx)    median {statistics.median(partial):6.1f} ms")
    print(
        "  queries per page      "
        + ", ".join(f"{n} steps: {q}" for n, q in queries.items())
        + ("  (constant)" if len(set(queries.values())) == 1 else "  (GROWS)")
    )
    print(f"  autosave subgoal text median {edit_ms:6.1f} ms  (target <= {EDIT_TARGET_MS})")
    print(f"  autosave step memory  median {statistics.median(step_edits):6.1f} ms")
    print(f"  split / undo          median {statistics.median(splits):6.1f} ms")
    ok = render_ms <= RENDER_TARGET_MS and edit_ms <= EDIT_TARGET_MS
    ok = ok and len(set(queries.values())) == 1
    print("  OK" if ok else "  MISSED A TARGET")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

"""The memory graph on trajectories recorded from the virtual device: the default embedder
merges the screens of a page and separates the pages (purity and completeness of the nodes
against the page each scripted move lands on)."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from graphs.index import load_graph
from graphs.services import do_build_memory_graph
from tests.devices.test_proposer_memory import CHATTER, FRESHCART, NOTES, record
from trajectories.jobs import run_job

pytestmark = pytest.mark.django_db

LAUNCHER = "launcher"

# (move, the page it lands on); every recording starts on the launcher.
SCRIPTS = {
    "notes-chats-shop": [
        (("open", NOTES), "notes:list"),
        (("tap", f"{NOTES}:id/note_1"), "notes:note"),
        (("back", None), "notes:list"),
        (("tap", f"{NOTES}:id/note_3"), "notes:note"),
        (("back", None), "notes:list"),
        (("open", CHATTER), "chatter:chats"),
        (("tap", f"{CHATTER}:id/chat_noah"), "chatter:thread"),
        (("back", None), "chatter:chats"),
        (("tap", f"{CHATTER}:id/chat_ava"), "chatter:thread"),
        (("back", None), "chatter:chats"),
        (("open", FRESHCART), "freshcart:home"),
        (("tap", f"{FRESHCART}:id/product_kettle"), "freshcart:product"),
        (("back", None), "freshcart:home"),
        (("tap", f"{FRESHCART}:id/product_pulse_buds"), "freshcart:product"),
        (("back", None), "freshcart:home"),
        (("tap", f"{FRESHCART}:id/tab_orders"), "freshcart:orders"),
    ],
    "shop-notes-chats": [
        (("open", FRESHCART), "freshcart:home"),
        (("tap", f"{FRESHCART}:id/product_aerosound_x3"), "freshcart:product"),
        (("back", None), "freshcart:home"),
        (("tap", f"{FRESHCART}:id/tab_orders"), "freshcart:orders"),
        (("tap", f"{FRESHCART}:id/tab_home"), "freshcart:home"),
        (("tap", f"{FRESHCART}:id/product_kettle"), "freshcart:product"),
        (("back", None), "freshcart:home"),
        (("open", NOTES), "notes:list"),
        (("tap", f"{NOTES}:id/note_2"), "notes:note"),
        (("back", None), "notes:list"),
        (("tap", f"{NOTES}:id/note_4"), "notes:note"),
        (("back", None), "notes:list"),
        (("open", CHATTER), "chatter:chats"),
        (("tap", f"{CHATTER}:id/chat_mia"), "chatter:thread"),
        (("back", None), "chatter:chats"),
        (("tap", f"{CHATTER}:id/chat_family"), "chatter:thread"),
    ],
}


def test_the_default_embedder_finds_the_pages_of_the_virtual_apps(
    adb_servers, device, alice, project
):
    page_at: dict[tuple[str, int], str] = {}
    for name, script in SCRIPTS.items():
        moves = [move for move, _ in script]
        trajectory = record(adb_servers, device, alice, project, name, moves, None)
        pages = [LAUNCHER] + [page for _, page in script]
        pages.append(pages[-1])  # finishing adds a terminate step: the screen stays
        assert trajectory.step_count == len(script) + 1
        for index, page in enumerate(pages):
            page_at[(str(trajectory.uid), index)] = page
    graph = do_build_memory_graph(project, alice, {"granularity": "action"}, queue=False)
    run_job(graph.job_id)
    graph.refresh_from_db()
    assert graph.status == "ready", graph.message
    nodes: dict[int, Counter] = defaultdict(Counter)
    pages: dict[str, Counter] = defaultdict(Counter)
    for node, members in enumerate(load_graph(graph).members):
        for member in members:
            page = page_at[(member["trajectory"], member["step"])]
            nodes[node][page] += 1
            pages[page][node] += 1
    total = sum(sum(c.values()) for c in nodes.values())
    purity = sum(c.most_common(1)[0][1] for c in nodes.values()) / total
    completeness = sum(c.most_common(1)[0][1] for c in pages.values()) / total
    print(
        f"virtual apps: {total} screens, {len(nodes)} nodes, {len(pages)} pages, "
        f"purity {purity:.3f}, completeness {completeness:.3f}"
    )
    assert total == len(page_at)
    assert purity >= 0.95 and completeness >= 0.95, (dict(nodes), purity, completeness)

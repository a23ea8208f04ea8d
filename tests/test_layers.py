"""The apps are layered: each imports only the apps below it, and none imports ``config``.

``core`` < ``trajectories`` < ``graphs`` < ``formats`` < ``evaluation`` < ``devices`` <
``fixtures`` < ``annotate``, ``agents`` and ``explore`` < ``rl`` and ``environments``;
``frontend`` sits on the domain apps.
``config`` is the wiring above them all (settings, URLs, the Celery app): an app reads settings
through ``django.conf.settings``, never by importing ``config``.
"""

from __future__ import annotations

import pytest

from tests.test_import_cycles import PACKAGES, import_graph, our_modules

ORDER = ("core", "trajectories", "graphs", "formats", "evaluation", "devices", "fixtures")
ALLOWED: dict[str, set[str]] = {app: set(ORDER[:i]) for i, app in enumerate(ORDER)}
ALLOWED["annotate"] = set(ORDER)
ALLOWED["agents"] = set(ORDER)  # agents drive devices, score with evaluation; not annotate
ALLOWED["explore"] = set(ORDER)  # explorations drive devices and build app graphs
ALLOWED["rl"] = {*ORDER, "agents"}  # the RL server leases the agents' pool, reads their formats
# generated environments: verified by the agents' generic solver, explored, exported as SFT
ALLOWED["environments"] = {*ORDER, "agents", "explore"}
ALLOWED["frontend"] = {"core", "trajectories", "graphs", "formats", "evaluation"}
ALLOWED["config"] = set(PACKAGES) - {"config"}


def app_of(module: str) -> str:
    return module.split(".")[0]


def upward_imports() -> list[str]:
    graph = import_graph(our_modules())
    found = []
    for module, imported in sorted(graph.items()):
        app = app_of(module)
        for target in sorted(imported):
            other = app_of(target)
            if other != app and other not in ALLOWED[app]:
                found.append(f"{module} imports {target}")
    return found


def test_every_package_has_a_place_in_the_layers():
    assert set(PACKAGES) == set(ALLOWED)


def test_no_app_imports_an_app_above_it_or_config():
    assert upward_imports() == []


@pytest.mark.parametrize(
    ("module", "target"),
    [("trajectories.jobs", "formats.catalogue"), ("graphs.build", "config.urls")],
)
def test_the_check_sees_an_upward_import(monkeypatch, module, target):
    """The check itself catches what it is for: a domain module importing an app above it."""
    real = import_graph

    def with_extra(modules):
        graph = real(modules)
        graph[module] = graph[module] | {target}
        return graph

    monkeypatch.setattr(f"{__name__}.import_graph", with_extra)
    assert f"{module} imports {target}" in upward_imports()

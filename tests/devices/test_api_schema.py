"""The API does what its OpenAPI schema says, for every operation, with generated data.

Schemathesis reads the schema Waypoint serves and sends each operation valid and invalid
requests (bodies, query strings, path ids), half of them naming real objects: alice's project,
its task, a labelled trajectory with its labels, proposal and review comment, a job, a memory
graph, an app graph, a member, an agent run (whose episode's trajectory no person recorded) and
a suite, and the virtual device she drives. Every answer must be no
server error and agree with the schema: a documented status code and content type, a body of the
documented shape, invalid input refused, valid input not refused as invalid.

It lives beside the device tests for their adb server; it drives a virtual phone of its own.
"""

from __future__ import annotations

import json
import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis.config import SchemathesisConfig

from agents.services import do_make_suite
from annotate.proposers import DEFAULT_PROPOSER
from annotate.services import do_assign, do_comment, do_request_proposal
from annotate.services.proposals import run_proposal
from devices.services import do_take_device
from devices.virtual import VirtualDevice
from explore.models import Exploration, ExplorationStatus
from graphs.appkg_jobs import do_start_app_graph
from graphs.services import do_build_memory_graph
from tests.agents.builders import finished_run
from tests.conftest import require_chromium
from tests.devices.conftest import free_port, grant
from tests.trajectories.builders import make_record
from trajectories.jobs import run_job
from trajectories.models import AnchorLink, Job, JobKind
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db

# Per operation. 100 found what 12 missed (a null where the schema promised a string), but took
# 201 s of a suite that must stay under 35 minutes on 2 cores (32 min with it, 2026-12-06);
# 50 keeps most of that depth at half the time. WAYPOINT_SCHEMA_EXAMPLES=12 gives a quick run,
# 200 a deeper one (run it after changing an API).
EXAMPLES = int(os.environ.get("WAYPOINT_SCHEMA_EXAMPLES", "50"))

# A schema-valid request may still break a rule that depends on the stored data (a step past the
# trajectory's last one, a user name nobody has): the API answers those 422, documented on every
# operation that has such rules. A schema-valid request answered 400 is still a contradiction.
# Every answer's body is checked against the documented schema of its status (with formats:
# a date is a date), as well as its status and content type.
CONFIG = SchemathesisConfig.from_dict(
    {
        "checks": {
            "response_schema_conformance": {"enabled": True, "validate-formats": True},
            "status_code_conformance": {"enabled": True},
            "content_type_conformance": {"enabled": True},
            "positive_data_acceptance": {
                "expected-statuses": ["2xx", "3xx", "401", "403", "404", "409", "422", "429"]
            },
        }
    }
)


@pytest.fixture(scope="module")
def own_device(adb_server):
    """A virtual phone of its own: generated actions leave it in any state, which the other
    device tests must not inherit."""
    phone = VirtualDevice(
        port=free_port(), size="540x1200", seed=7, chromium_path=require_chromium()
    ).start()
    yield adb_server.connect(phone.serial)
    adb_server.run("disconnect", phone.serial)
    phone.stop()


@pytest.fixture
def world(project, alice, bob, adb_servers, own_device, settings):
    """Real objects for every kind of id the API takes; alice (admin) drives the device."""
    settings.WAYPOINT_SETTLE_TIMEOUT_MS = 300  # generated actions must not wait for a calm screen
    settings.WAYPOINT_SETTLE_INTERVAL_MS = 50
    # Recorded by none of this instance's users, and a job no user started: the API shows
    # their recorded_by and created_by as null, which the schema must allow.
    record = make_record(steps=3, seed=11, recorded_by="a recorder of another lab")
    trajectory, _ = do_import_trajectory(project, record)
    do_assign(trajectory, alice, alice)
    job = Job.objects.create(
        project=project, kind=JobKind.EXPORT, format="waypoint", created_by=None
    )
    device = own_device
    grant(device.serial, project)
    lease = do_take_device(device.serial, adb_servers[0], alice)
    subgoal = trajectory.subgoals.order_by("start").first()
    graph = do_build_memory_graph(project, alice, queue=False)
    run_job(graph.job_id)
    app_graph = do_start_app_graph(project, "com.example.shop", alice)
    run_job(app_graph.job_id)
    proposal, _ = do_request_proposal(trajectory, alice, DEFAULT_PROPOSER)
    run_proposal(proposal)
    run = finished_run(project, alice, {("freshcart-order-number", 1): "ok"})
    suite = do_make_suite(project, alice, "basics", "1", ["freshcart-order-number"], "1..2")
    # A finished exploration (stopping or resuming it is refused: no walk starts here).
    exploration = Exploration.objects.create(
        project=project,
        app="com.waypoint.mailbox",
        serial=device.serial,
        budget_steps=10,
        status=ExplorationStatus.FINISHED,
        created_by=alice,
    )
    return {
        "project_id": project.pk,
        "task_id": trajectory.task_id,
        "trajectory_id": trajectory.pk,
        "job_id": job.pk,
        "user_id": bob.pk,
        "serial": device.serial,
        "index": 1,
        "subgoal_id": subgoal.pk,
        "target_id": trajectory.memory_targets.first().pk,
        "key": trajectory.anchors.first().key,
        "link_id": AnchorLink.objects.filter(source__trajectory=trajectory).first().pk,
        "sha256": trajectory.screens.first().screenshot_id,
        "lease": lease,
        "graph_id": graph.pk,
        "app_graph_id": app_graph.pk,
        "proposal_id": proposal.pk,
        "comment_id": do_comment(trajectory, alice, 1, "Is this the right price?").pk,
        "run_id": run.pk,
        "name": suite.name,
        "version": suite.version,
        "exploration_id": exploration.pk,
        "app": exploration.app,
    }


def real_id(world: dict, path: str, name: str):
    """The real object a path parameter names: an app graph's paths take the app graph."""
    if name == "graph_id" and path.startswith("/api/v1/app-graphs/"):
        name = "app_graph_id"
    return world.get(name)


@pytest.fixture
def api_schema(world):
    """The schema Waypoint serves, called in-process through its WSGI application."""
    generated = SchemaGenerator().get_schema(request=None, public=True)
    raw = json.loads(OpenApiJsonRenderer().render(generated))
    schema = schemathesis.openapi.from_dict(raw, config=CONFIG)
    schema.app = get_wsgi_application()
    # The test's transaction holds the data: requests must not close its connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield schema
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


schema = schemathesis.pytest.from_fixture("api_schema")


def test_every_path_parameter_has_a_real_object(world):
    """Every id the API takes in a path is tried on a real object too, edits and devices alike."""
    generated = SchemaGenerator().get_schema(request=None, public=True)
    missing = [
        f"{path} {parameter['name']}"
        for path, operations in generated["paths"].items()
        for operation in operations.values()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "path" and real_id(world, path, parameter["name"]) is None
    ]
    assert missing == []


@schema.parametrize()
@schema.given(real_ids=st.booleans())
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_agrees_with_the_schema(case, real_ids, world, alice):
    if real_ids and case.path_parameters:
        case.path_parameters = {
            name: real_id(world, case.operation.path, name) for name in case.path_parameters
        }
    token, _ = Token.objects.get_or_create(user=alice)
    case.call_and_validate(headers={"Authorization": f"Token {token.key}"})

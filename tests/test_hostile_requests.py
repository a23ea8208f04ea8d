"""Hostile input on the API's upload endpoints: every one is refused with a {"detail"} that
names the place, before it costs the stack, memory or an echo of itself.

The endpoints: memory graph import (JSON body or multipart), app graph import, and the
evaluator (predictions and benchmark uploads). alice is the project's admin.
"""

from __future__ import annotations

import base64
import io
import json
import time
import zipfile

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from graphs.models import MemoryGraph

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000
TASK = {"task_id": "T1", "steps": [{"step_index": 0, "actionForm": {"action": "tap"}}]}
GROUND_TRUTH = (json.dumps(TASK) + "\n").encode()


@pytest.fixture
def api(alice):
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(alice)
    return client


def upload(name: str, data: bytes | str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data.encode() if isinstance(data, str) else data)


def evaluate(api, project, predictions: bytes | str, benchmark: bytes | str = GROUND_TRUTH, **kw):
    files = {
        "predictions": upload("p.jsonl", predictions),
        "benchmark": upload("gt.jsonl", benchmark),
    }
    return api.post(f"/api/v1/projects/{project.pk}/evaluations/", {**files, **kw})


# ------------------------------------------------------------------ JSON nested 100,000 deep


def test_a_graph_import_body_nested_100000_deep_is_a_400(api, project):
    url = f"/api/v1/projects/{project.pk}/graphs/import"
    response = api.post(url, DEEP, content_type="application/json")
    assert (response.status_code, response.json()) == (
        400,
        {"detail": "JSON parse error - body: invalid JSON: nested too deeply"},
    )


def test_deep_params_are_refused_however_deep_the_parser_would_go(api, project):
    """A depth the parser manages (900) is still refused: what is read must survive every
    recursive walk after it (serializers, the JSON column)."""
    nested = "[" * 900 + "]" * 900
    graph = '{"format": "waypoint.memory_graph", "format_version": 1, "params": '
    for url, body in (
        (f"/api/v1/projects/{project.pk}/graphs/", '{"params": {"tau": ' + nested + "}}"),
        (f"/api/v1/projects/{project.pk}/graphs/import", graph + nested + "}"),
    ):
        response = api.post(url, body, content_type="application/json")
        assert (response.status_code, response.json()["detail"]) == (
            400,
            "JSON parse error - body: invalid JSON: nested too deeply",
        )


def test_a_graph_upload_nested_100000_deep_is_a_422(api, project):
    response = api.post(
        f"/api/v1/projects/{project.pk}/graphs/import", {"file": upload("g.json", DEEP)}
    )
    assert (response.status_code, response.json()) == (
        422,
        {"detail": "file: invalid JSON: nested too deeply"},
    )
    assert not MemoryGraph.objects.exists()


def test_an_app_graph_upload_nested_100000_deep_is_a_422(api, project):
    response = api.post(
        f"/api/v1/projects/{project.pk}/app-graphs/import", {"file": upload("g.json", DEEP)}
    )
    assert (response.status_code, response.json()) == (
        422,
        {"detail": "app graph: invalid JSON: nested too deeply"},
    )


def test_predictions_nested_100000_deep_are_refused_naming_the_line(api, project):
    response = evaluate(api, project, '{"task_id": "T1", "step_index": 0}\n' + DEEP + "\n")
    assert (response.status_code, response.json()) == (
        422,
        {"detail": "predictions line 2: invalid JSON: nested too deeply"},
    )


@pytest.mark.parametrize(
    "name, text", [("gt.jsonl", DEEP), ("gt.json", "[" + DEEP)], ids=["jsonl", "json-array"]
)
def test_a_benchmark_nested_100000_deep_is_refused(api, project, name, text):
    response = api.post(
        f"/api/v1/projects/{project.pk}/evaluations/",
        {"predictions": upload("p.jsonl", "{}\n"), "benchmark": upload(name, text)},
    )
    assert (response.status_code, response.json()) == (
        422,
        {"detail": f"{name}: invalid JSON: nested too deeply"},
    )


def test_a_deep_tool_call_in_a_models_output_is_a_malformed_line(api, project):
    """What a model wrote is scored or counted, never fatal: its <tool_call> too."""
    output = "Action: tap\n<tool_call>" + "[" * 5000 + "</tool_call>"
    line = json.dumps({"task_id": "T1", "step_index": 0, "output": output})
    response = evaluate(api, project, line + "\n")
    assert response.status_code == 200
    assert response.json()["malformed"]["lines"] == [
        {"line": 1, "reason": "the <tool_call>: invalid JSON: nested too deeply"}
    ]


# ------------------------------------------------------------------ sizes checked before use


def graph_export(dim: int, values: int, nodes: int = 1) -> dict:
    vector = base64.b64encode(np.zeros(values, dtype="<f4").tobytes()).decode()
    return {
        "format": "waypoint.memory_graph",
        "format_version": 1,
        "params": {},
        "embedder": {"name": "structure", "dim": dim, "text_dim": 8},
        "nodes": [{"index": i, "size": 1, "members": [], "sum": vector} for i in range(nodes)],
        "edges": [],
    }


def test_a_graph_whose_dim_is_10_to_the_12_is_refused_before_anything_is_allocated(api, project):
    url = f"/api/v1/projects/{project.pk}/graphs/import"
    started = time.perf_counter()
    response = api.post(url, graph_export(10**12, 1), format="json")
    assert (response.status_code, response.json()) == (
        422,
        {"detail": "embedder.dim: must be between 1 and 65536, got 1000000000000"},
    )
    assert time.perf_counter() - started < 5


def test_a_graph_whose_vectors_are_shorter_than_its_dim_is_refused_by_node(api, project):
    url = f"/api/v1/projects/{project.pk}/graphs/import"
    response = api.post(url, graph_export(65_536, 3, nodes=2000), format="json")
    assert (response.status_code, response.json()) == (
        422,
        {"detail": "nodes[0].sum: 3 values, expected 65536"},
    )
    for dim in (0, -1):
        response = api.post(url, graph_export(dim, 1), format="json")
        assert response.json() == {
            "detail": f"embedder.dim: must be between 1 and 65536, got {dim}"
        }


def test_a_graph_upload_over_the_file_limit_is_refused_before_it_is_read(api, project, settings):
    settings.WAYPOINT_MAX_FILE_BYTES = 1024
    for url in ("graphs/import", "app-graphs/import"):
        response = api.post(
            f"/api/v1/projects/{project.pk}/{url}", {"file": upload("g.json", " " * 2048)}
        )
        assert (response.status_code, response.json()) == (
            422,
            {
                "detail": "file: file is 2.0 KiB, over the limit of 1.0 KiB "
                "(WAYPOINT_MAX_FILE_BYTES)"
            },
        )


def test_an_upload_is_measured_before_a_byte_of_it_is_read():
    from trajectories.bounds import read_upload

    class Huge:
        size = 850 * 1024**2

        def chunks(self):
            raise AssertionError("read before its size was checked")

    with pytest.raises(ValueError, match=r"^screenshot: file is 850.0 MiB, over the limit"):
        read_upload(Huge(), "screenshot")


def zip_of(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def test_a_benchmark_zip_bomb_is_refused_from_its_headers(api, project):
    manifest = json.dumps({"format": "androtmem", "split": {"ratios": {"test": 1}}})
    bomb = zip_of(
        {
            "export/manifest.json": manifest.encode(),
            "export/test.jsonl": GROUND_TRUTH,
            "export/images/zeros.png": bytes(16 * 1024**2),
        }
    )
    response = api.post(
        f"/api/v1/projects/{project.pk}/evaluations/",
        {"predictions": upload("p.jsonl", "{}\n"), "benchmark": upload("bench.zip", bomb)},
    )
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert detail.startswith("bench.zip: unpacks to 16.0 MiB, ")
    assert detail.endswith("the limit is 100 times (WAYPOINT_MAX_UNPACK_RATIO)")


def test_a_benchmark_zip_within_the_limits_is_scored(api, project):
    manifest = json.dumps({"format": "androtmem", "split": {"ratios": {"test": 1}}})
    benchmark = zip_of(
        {"export/manifest.json": manifest.encode(), "export/test.jsonl": GROUND_TRUTH}
    )
    prediction = {"task_id": "T1", "step_index": 0, "prediction": {"action": {"action": "tap"}}}
    response = api.post(
        f"/api/v1/projects/{project.pk}/evaluations/",
        {
            "predictions": upload("p.jsonl", json.dumps(prediction) + "\n"),
            "benchmark": upload("bench.zip", benchmark),
        },
    )
    assert response.status_code == 200, response.json()
    assert response.json()["benchmark"] == {"file": "bench.zip", "split": None, "tasks": 1}


def test_a_line_over_the_file_limit_is_refused_without_being_held(api, project, settings):
    settings.WAYPOINT_MAX_FILE_BYTES = 1024
    response = evaluate(api, project, "{}\n" + "x" * 5000 + "\n")
    assert (response.status_code, response.json()) == (
        422,
        {"detail": "predictions line 2: longer than 1.0 KiB (WAYPOINT_MAX_FILE_BYTES)"},
    )
    response = evaluate(api, project, "{}\n", benchmark=GROUND_TRUTH * 100)
    size = f"{len(GROUND_TRUTH * 100) / 1024:.1f} KiB"
    assert response.json() == {
        "detail": f"gt.jsonl: file is {size}, over the limit of 1.0 KiB (WAYPOINT_MAX_FILE_BYTES)"
    }


def test_lines_are_read_in_pieces_past_the_limit():
    from trajectories.bounds import bounded_lines

    handle = io.StringIO("short\n" + "x" * 100 + "\nafter\n" + "y" * 50)
    assert list(bounded_lines(handle, limit=10)) == [
        (1, "short\n"),
        (2, None),
        (3, "after\n"),
        (4, None),
    ]


# ------------------------------------------------------------------ bodies over Django's limits


def test_a_body_over_the_limit_gets_a_json_detail_not_an_html_page(api, project, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    detail = (
        "the request body, files aside, is over the limit of 1.0 KiB "
        "(DATA_UPLOAD_MAX_MEMORY_SIZE); send a large document as a multipart/form-data file"
    )
    big = "x" * 2048
    for response in (
        api.post(
            f"/api/v1/projects/{project.pk}/graphs/",
            json.dumps({"params": {}, "note": big}),
            content_type="application/json",
        ),
        api.post(
            f"/api/v1/projects/{project.pk}/evaluations/",
            {"predictions": upload("p.jsonl", "{}\n"), "split": big},
        ),
        api.post(
            f"/api/v1/projects/{project.pk}/evaluations/",
            f"split={big}",
            content_type="application/x-www-form-urlencoded",
        ),
    ):
        assert response.status_code == 400
        assert response["Content-Type"] == "application/json"
        assert response.json() == {"detail": detail}


def test_a_body_refused_before_any_view_is_json_under_the_api(rf):
    from django.core.exceptions import RequestDataTooBig

    from config.errors import bad_request

    response = bad_request(rf.post("/api/v1/projects/"), RequestDataTooBig("too big"))
    assert response.status_code == 400
    assert json.loads(response.content)["detail"].startswith("the request body, files aside,")
    page = bad_request(rf.post("/projects/"), RequestDataTooBig("too big"))
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")


# ------------------------------------------------------------------ nothing echoed back whole


def test_the_evaluator_does_not_echo_a_60_mb_line(api, project):
    task_id = "y" * (8 * 1024**2)
    response = evaluate(api, project, json.dumps({"task_id": task_id, "step_index": 0}) + "\n")
    assert response.status_code == 200
    assert response.json()["unknown_tasks"] == {"count": 1, "ids": ["y" * 80 + "…"]}
    assert len(response.content) < 2000


def test_an_error_does_not_echo_a_long_value(api, project):
    rule = "g" * (8 * 1024**2)
    response = evaluate(
        api, project, "{}\n", benchmark=json.dumps({"task_id": "T", "grading_rule": rule})
    )
    assert response.status_code == 422
    assert response.json()["detail"] == (
        f"gt.jsonl line 1: grading_rule: unknown grading rule '{'g' * 80}…' "
        "(known: exact, iexact, contains, number, regex)"
    )
    app_graph = json.dumps({"format": "x" * 10**6})
    response = api.post(
        f"/api/v1/projects/{project.pk}/app-graphs/import", {"file": upload("g.json", app_graph)}
    )
    assert response.status_code == 422 and len(response.content) < 300


def test_json_100_levels_deep_is_read_and_101_is_not():
    from trajectories.bounds import load_json
    from trajectories.validation import InvalidData

    deepest = load_json('{"a": ' * 100 + "1" + "}" * 100, "x")
    for _ in range(100):
        deepest = deepest["a"]
    assert deepest == 1
    with pytest.raises(InvalidData, match=r"^x: invalid JSON: nested too deeply$"):
        load_json('{"a": ' * 101 + "1" + "}" * 101, "x")


def api_views():
    """Every API view class the site routes to."""
    from django.urls import URLPattern, URLResolver, get_resolver

    def walk(patterns):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns)
            elif isinstance(pattern, URLPattern) and hasattr(pattern.callback, "cls"):
                yield pattern.callback.cls

    return set(walk(get_resolver().url_patterns))


def test_every_api_endpoint_reads_json_through_the_depth_limited_parser():
    """DRF's own JSONParser lets a RecursionError through (a 500): whatever parsers an endpoint
    lists, the JSON one it uses is ours (trajectories.parsers.JSONParser)."""
    from rest_framework.parsers import JSONParser as DRFJSONParser

    from trajectories.parsers import JSONParser

    views = api_views()
    assert len(views) > 20
    unbounded = sorted(
        f"{view.__module__}.{view.__qualname__}"
        for view in views
        for parser in view().get_parsers()
        if isinstance(parser, DRFJSONParser) and not isinstance(parser, JSONParser)
    )
    assert unbounded == []


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_the_token_endpoint_refuses_deep_json(depth):
    deep = "[" * depth + "]" * depth
    client = APIClient(raise_request_exception=False)
    response = client.post("/api/v1/auth/token/", deep, content_type="application/json")
    assert (response.status_code, response.json()) == (
        400,
        {"detail": "JSON parse error - body: invalid JSON: nested too deeply"},
    )


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_the_agents_and_explore_endpoints_refuse_deep_json(api, project, depth):
    deep = "[" * depth + "]" * depth
    for url, body in (
        (f"/api/v1/projects/{project.pk}/suites/", deep),
        (f"/api/v1/projects/{project.pk}/runs/", '{"agent": "solver", "seeds": ' + deep + "}"),
        (f"/api/v1/projects/{project.pk}/explorations/", '{"allow": ' + deep + "}"),
    ):
        response = api.post(url, body, content_type="application/json")
        assert (response.status_code, response.json()) == (
            400,
            {"detail": "JSON parse error - body: invalid JSON: nested too deeply"},
        ), url
    deny = f"/api/v1/projects/{project.pk}/deny-lists/com.waypoint.mailbox"
    response = api.put(deny, '{"entries": ' + deep + "}", content_type="application/json")
    assert (response.status_code, response.json()["detail"]) == (
        400,
        "JSON parse error - body: invalid JSON: nested too deeply",
    )

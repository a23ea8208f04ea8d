"""Embedders: the default one's vectors, and the OpenAI-compatible one against a local server."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from fixtures.generate import DEFAULT_SIZE, render, shop_home, shop_product
from graphs.embedders import get_embedder
from trajectories.validation import InvalidData


class FakeEmbeddings(BaseHTTPRequestHandler):
    """An OpenAI-compatible /v1/embeddings: a text's vector is its letters' counts, an image's
    the first bytes of its data URL; records what it was asked."""

    requests: list[dict] = []

    def do_POST(self):  # noqa: N802 - the handler's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeEmbeddings.requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), **body}
        )
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"model not loaded")
            return
        data = []
        for i, item in enumerate(body["input"]):
            vector = [float(item.count(c)) + 0.1 for c in "abcdefgh"]
            data.append({"index": i, "embedding": vector, "object": "embedding"})
        payload = json.dumps({"object": "list", "data": data[::-1], "model": body["model"]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload.encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def embeddings_server(monkeypatch, settings):
    settings.LLM_HTTP_RETRIES, settings.LLM_BACKOFF_MS = 1, 1  # one retry, without a wait
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeEmbeddings.requests = []
    monkeypatch.setenv("WAYPOINT_EMBEDDINGS_URL", f"http://127.0.0.1:{server.server_port}/v1")
    monkeypatch.setenv("WAYPOINT_EMBEDDINGS_MODEL", "qwen3-vl-embedding")
    monkeypatch.setenv("WAYPOINT_EMBEDDINGS_API_KEY", "sk-test")
    yield server
    server.shutdown()


def test_the_openai_embedder_sends_images_as_data_urls_and_texts_as_text(embeddings_server):
    embedder = get_embedder("openai")
    texts = embedder.embed_texts(["abba", "hhh", "abba"])
    assert texts.shape == (3, 8) and texts.dtype == np.float32
    assert np.allclose(np.linalg.norm(texts, axis=1), 1)
    assert np.allclose(texts[0], texts[2]) and not np.allclose(texts[0], texts[1])
    png = render(shop_home(DEFAULT_SIZE)).png
    screens = embedder.embed_screens([(png, None)])
    assert screens.shape == (1, 8)
    first, second = FakeEmbeddings.requests
    assert first == {
        "path": "/v1/embeddings",
        "auth": "Bearer sk-test",
        "model": "qwen3-vl-embedding",
        "input": ["abba", "hhh", "abba"],
    }
    assert second["input"][0].startswith("data:image/png;base64,iVBORw0KGgo")


def test_the_openai_embedder_reports_what_went_wrong(embeddings_server, monkeypatch):
    with pytest.raises(InvalidData, match="screenshot: not an image"):
        get_embedder("openai").embed_screens([(b"GIF89a...", None)])
    monkeypatch.setenv("WAYPOINT_EMBEDDINGS_MODEL", "broken")
    with pytest.raises(
        InvalidData,
        match=r"^embedder: gave up after 2 requests: HTTP 500 Internal Server Error from "
        r"http://127\.0\.0\.1:\d+/v1/embeddings$",
    ):
        get_embedder("openai").embed_texts(["x"])
    monkeypatch.setenv("WAYPOINT_EMBEDDINGS_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(
        InvalidData,
        match=r"^embedder: gave up after 2 requests: no answer from "
        r"http://127\.0\.0\.1:9/v1/embeddings \(",
    ):
        get_embedder("openai").embed_texts(["x"])
    monkeypatch.delenv("WAYPOINT_EMBEDDINGS_URL")
    with pytest.raises(InvalidData, match="embedder: openai needs WAYPOINT_EMBEDDINGS_URL"):
        get_embedder("openai")
    with pytest.raises(
        InvalidData, match=r"embedder: unknown embedder 'clip' \(known: openai, structure\)"
    ):
        get_embedder("clip")


@pytest.mark.django_db
def test_a_graph_can_be_built_and_queried_with_the_openai_embedder(
    embeddings_server, project, alice, generated, django_capture_on_commit_callbacks
):
    from graphs.models import ScreenEmbedding
    from graphs.services import retrieve_for_screen
    from tests.graphs.conftest import build_now

    graph = build_now(project, alice, django_capture_on_commit_callbacks, {"embedder": "openai"})
    assert graph.status == "ready", graph.message
    assert set(ScreenEmbedding.objects.values_list("embedder", flat=True)) == {
        "openai:qwen3-vl-embedding"
    }
    screen = render(shop_product("Acme Tent", DEFAULT_SIZE))
    answer = retrieve_for_screen(graph, screen.png, screen.xml)
    assert len(answer["nodes"]) == 1


def test_the_structure_embedder_gives_unit_vectors_that_tell_pages_apart():
    embedder = get_embedder("structure")
    a = render(shop_product("Acme Tent", DEFAULT_SIZE))
    b = render(shop_product("Orbit Keyboard", DEFAULT_SIZE))
    home = render(shop_home(DEFAULT_SIZE))
    vectors = embedder.embed_screens([(s.png, s.xml) for s in (a, b, home)])
    assert vectors.shape == (3, embedder.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert vectors[0] @ vectors[1] >= 0.9 > vectors[0] @ vectors[2]
    texts = embedder.embed_texts(["Search for the tent", "search for the tent", "Save the note"])
    assert texts[0] @ texts[1] > 0.99 and texts[0] @ texts[2] < 0.5

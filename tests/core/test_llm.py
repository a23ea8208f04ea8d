"""The one OpenAI-compatible client against a local server started by the test: retries after a
429 and as long as ``Retry-After`` asks, timeouts, HTTP errors with their standard reason (never
the server's body), and answers that are not JSON or not what was asked."""

from __future__ import annotations

import json
import time

import pytest

from core.llm import LLMClient, LLMError, image_part

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
JPEG = b"\xff\xd8\xff\xe0" + b"\0" * 16


@pytest.fixture
def client():
    def make(server, **kwargs) -> LLMClient:
        return LLMClient(server.url, "test-vl", "sk-test", **kwargs)

    return make


def test_it_asks_with_text_and_images_and_counts_the_tokens(llm, client):
    server = llm([(200, "Fine.", 0)])
    answer = client(server).chat(
        [{"type": "text", "text": "What is on it?"}, image_part(PNG), image_part(JPEG)],
        json_object=True,
    )
    assert (answer.text, answer.prompt_tokens, answer.completion_tokens) == ("Fine.", 100, 20)
    (request,) = server.requests
    assert request["auth"] == "Bearer sk-test"
    body = request["body"]
    assert (body["model"], body["temperature"]) == ("test-vl", 0)
    assert body["response_format"] == {"type": "json_object"}
    text, png, jpeg = body["messages"][0]["content"]
    assert text == {"type": "text", "text": "What is on it?"}
    assert png["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert jpeg["image_url"]["url"].startswith("data:image/jpeg;base64,/9j/")


def test_a_429_is_asked_again_after_the_time_retry_after_says(llm, client):
    server = llm([(429, None, 0, {"Retry-After": "1"}), (200, "Fine.", 0)])
    started = time.monotonic()
    assert client(server).chat("Hello").text == "Fine."
    # the backoff is 1 ms here: the second request waited for the server's second
    assert len(server.requests) == 2
    assert server.requests[1]["at"] - server.requests[0]["at"] >= 1
    assert time.monotonic() - started < 5


def test_5xx_are_retried_with_backoff_then_given_up_naming_the_status(llm, client, settings):
    settings.LLM_HTTP_RETRIES = 2
    server = llm(lambda body: (503, b'{"error": {"message": "model is loading"}}', 0))
    with pytest.raises(LLMError) as caught:
        client(server).chat("Hello")
    assert str(caught.value) == (
        f"gave up after 3 requests: HTTP 503 Service Unavailable from {server.url}/chat/completions"
    )
    assert len(server.requests) == 3


def test_other_http_errors_are_not_retried(llm, client):
    server = llm([(404, b'{"error": {"message": "no model test-vl"}}', 0)])
    with pytest.raises(LLMError) as caught:
        client(server).chat("Hello")
    assert str(caught.value) == f"HTTP 404 Not Found from {server.url}/chat/completions"
    assert len(server.requests) == 1


def test_a_request_that_takes_longer_than_the_timeout_is_retried_then_fails(llm, client, settings):
    settings.LLM_HTTP_RETRIES = 1
    server = llm(lambda body: (200, "Too late.", 1.5))
    started = time.monotonic()
    with pytest.raises(LLMError) as caught:
        client(server, timeout_s=0.5).chat("Hello")
    assert str(caught.value) == (
        f"gave up after 2 requests: no answer from {server.url}/chat/completions (timed out)"
    )
    assert len(server.requests) == 2 and time.monotonic() - started < 3


def test_an_endpoint_that_does_not_listen_is_reported(client, settings):
    settings.LLM_HTTP_RETRIES = 0

    class Nowhere:
        url = "http://127.0.0.1:9/v1"

    settings.LLM_BASE_URL = Nowhere.url

    with pytest.raises(LLMError, match=r"^gave up after 1 requests: no answer from http://127"):
        client(Nowhere).chat("Hello")


@pytest.mark.parametrize(
    "body, message",
    [
        (b"<html>Bad gateway</html>", "answered something that is not JSON (24 bytes)"),
        (b'{"choices": []}', "answered something that is not a chat completion"),
        (b'{"object": "list", "data": []}', "answered something that is not a chat completion"),
    ],
)
def test_garbage_is_refused_without_asking_again(llm, client, body, message):
    server = llm([(200, body, 0)])
    with pytest.raises(LLMError) as caught:
        client(server).chat("Hello")
    assert str(caught.value).startswith(f"{server.url}/chat/completions {message}")
    assert len(server.requests) == 1


def test_embeddings_come_back_in_the_order_of_the_inputs(llm, client):
    data = [{"index": 1, "embedding": [0, 1]}, {"index": 0, "embedding": [1, 0]}]
    server = llm([(200, json.dumps({"data": data}).encode(), 0)])
    assert client(server).embed(["first", "second"]) == [[1.0, 0.0], [0.0, 1.0]]
    assert server.requests[0]["body"] == {"model": "test-vl", "input": ["first", "second"]}


def test_embeddings_that_do_not_match_the_inputs_are_refused(llm, client):
    server = llm(
        [
            (200, b'{"data": [{"index": 0, "embedding": [1, 0]}]}', 0),
            (200, b'{"data": [{"index": 0}]}', 0),
        ]
    )
    url = f"{server.url}/embeddings"
    with pytest.raises(LLMError, match=rf"^{url} answered 1 vectors for 2 inputs$"):
        client(server).embed(["first", "second"])
    with pytest.raises(LLMError, match=rf"^{url} answered without data\[\]\.embedding$"):
        client(server).embed(["first"])

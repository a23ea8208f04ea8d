"""The one OpenAI-compatible client: chat completions (text and images) and embeddings.

The LLM proposer, the evaluator's judge and the memory graphs' ``openai`` embedder call their
endpoints through :class:`LLMClient`, under the same rules:

- each request holds one of its endpoint's slots (:mod:`core.llm_limits`: requests at once and
  requests per minute, counted over every worker process);
- a 429, a 5xx, a timeout or a dropped connection is tried again, up to ``LLM_HTTP_RETRIES``
  times, after ``LLM_BACKOFF_MS`` doubling each time, or after what the server's
  ``Retry-After`` asks; the slot is given back while it waits;
- each request has a timeout (``LLM_TIMEOUT_S`` unless the caller gives its own);
- whatever goes wrong is an :class:`LLMError` that says what and where: the HTTP status with the
  server's own message, no answer in time, an answer that is not JSON, or JSON that is not a
  chat completion or embeddings.

The transport is the standard library's ``urllib``: one JSON POST with a timeout is all it has to
do. The ``openai`` package would bring its own retries, which hold no slot of ours and follow
none of our settings (we would turn them off), and it and ``httpx`` a dozen packages more.
"""

from __future__ import annotations

import base64
import http.client
import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from .llm_limits import LimitWait, request_slot

MAX_DETAIL = 300  # what an error keeps of the server's own message

Content = str | list[dict[str, Any]]  # a chat message's content: text, or text and image parts


class LLMError(Exception):
    """The endpoint gave no usable answer."""


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


def image_type(data: bytes) -> str:
    """The content type of a screenshot's bytes (PNG unless they are JPEG or WebP)."""
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "image/png"


def data_url(data: bytes, content_type: str | None = None) -> str:
    """An image as a ``data:`` URL, the form OpenAI-compatible servers take images in."""
    return f"data:{content_type or image_type(data)};base64,{base64.b64encode(data).decode()}"


def image_part(data: bytes) -> dict[str, Any]:
    """An image as a part of a chat message's content."""
    return {"type": "image_url", "image_url": {"url": data_url(data)}}


def _detail(error: urllib.error.HTTPError) -> str:
    """The server's own words about an HTTP error (OpenAI's ``{"error": {"message"}}``)."""
    try:
        body = error.read(4096).decode("utf-8", "replace").strip()
    except (OSError, http.client.HTTPException):
        return ""
    try:
        found = json.loads(body)
    except ValueError:
        found = body
    if isinstance(found, dict):
        found = found.get("error", found.get("detail", body))
        if isinstance(found, dict):
            found = found.get("message", body)
    text = " ".join(str(found).split())[:MAX_DETAIL]
    return f": {text}" if text else ""


class LLMClient:
    """One OpenAI-compatible API (``base_url`` like ``http://host:8000/v1``) and model."""

    def __init__(
        self, base_url: str, model: str, api_key: str = "", *, timeout_s: float | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout_s = float(settings.LLM_TIMEOUT_S if timeout_s is None else timeout_s)

    def url(self, path: str) -> str:
        """The URL of ``path`` (``/embeddings``); a base URL that already ends in it is kept."""
        return self.base_url if self.base_url.endswith(path) else self.base_url + path

    def chat(self, content: Content, *, json_object: bool = False) -> Completion:
        """The model's answer to one user message; ``json_object`` asks for a JSON answer."""
        return self.complete([{"role": "user", "content": content}], json_object=json_object)

    def complete(self, messages: list[dict[str, Any]], *, json_object: bool = False) -> Completion:
        """The model's answer to a conversation (system, user and assistant turns)."""
        body: dict[str, Any] = {"model": self.model, "temperature": 0, "messages": messages}
        if json_object:
            body["response_format"] = {"type": "json_object"}
        url = self.url("/chat/completions")
        answer = self.post(url, body)
        try:
            text = answer["choices"][0]["message"]["content"]
            usage = answer.get("usage") or {}
            return Completion(
                text=str(text),
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
            )
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise LLMError(f"{url} answered something that is not a chat completion") from None

    def embed(self, inputs: list[str]) -> list[list[float]]:
        """One vector per input, in their order (texts, or images as data URLs)."""
        url = self.url("/embeddings")
        answer = self.post(url, {"model": self.model, "input": inputs})
        try:
            rows = sorted(answer["data"], key=lambda item: item["index"])
            vectors = [[float(x) for x in row["embedding"]] for row in rows]
        except (KeyError, TypeError, ValueError, AttributeError):
            raise LLMError(f"{url} answered without data[].embedding") from None
        if len(vectors) != len(inputs):
            raise LLMError(f"{url} answered {len(vectors)} vectors for {len(inputs)} inputs")
        return vectors

    def post(self, url: str, body: dict[str, Any]) -> Any:
        """POST ``body`` as JSON and return the JSON answer, under the module's rules."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        attempts = 1 + max(0, int(settings.LLM_HTTP_RETRIES))
        wait = settings.LLM_BACKOFF_MS / 1000
        last = ""
        for attempt in range(attempts):
            if attempt:
                time.sleep(wait)
                wait *= 2
            request = urllib.request.Request(url, data=data, headers=headers)
            try:
                with (
                    request_slot(url, timeout_s=self.timeout_s),
                    urllib.request.urlopen(request, timeout=self.timeout_s) as response,
                ):
                    raw = response.read()
            except LimitWait as exc:
                raise LLMError(str(exc)) from None
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code} from {url}{_detail(exc)}"
                if exc.code != 429 and exc.code < 500:
                    raise LLMError(last) from None
                retry_after = exc.headers.get("Retry-After", "")
                if retry_after.isdigit():
                    wait = float(retry_after)
            except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                last = f"no answer from {url} ({getattr(exc, 'reason', None) or exc})"
            else:
                try:
                    return json.loads(raw)
                except ValueError:
                    raise LLMError(
                        f"{url} answered something that is not JSON: {raw[:60]!r}"
                    ) from None
        raise LLMError(f"gave up after {attempts} requests: {last}")

"""The one OpenAI-compatible client: chat completions (text and images) and embeddings.

The LLM proposer, the evaluator's judge and the memory graphs' ``openai`` embedder call their
endpoints through :class:`LLMClient`, under the same rules:

- each request holds one of its endpoint's slots (:mod:`core.llm_limits`: requests at once and
  requests per minute, counted over every worker process);
- a 429, a 5xx, a timeout or a dropped connection is tried again, up to ``LLM_HTTP_RETRIES``
  times, after ``LLM_BACKOFF_MS`` doubling each time, or after what the server's
  ``Retry-After`` asks; the slot is given back while it waits;
- each request has a timeout (``LLM_TIMEOUT_S`` unless the caller gives its own);
- whatever goes wrong is an :class:`LLMError` that says what and where: the HTTP status and its
  standard reason, no answer in time, an answer that is not JSON, or JSON that is not a chat
  completion or embeddings. The remote body is never repeated: an error message is shown to
  people, and a URL that answers with a file or an internal service's page must not leak it.

Where requests may go (:func:`check_url`, before any connection, and again for a redirect):

- ``http`` and ``https`` only (no ``file:``, ``ftp:``, ``data:``: the opener has no handler for
  them either);
- to a host of the allow-list: ``WAYPOINT_ENDPOINT_ALLOWED_HOSTS`` (``host`` for any port, or
  ``host:port``) and the endpoints the environment configures (``LLM_BASE_URL``,
  ``WAYPOINT_JUDGE_URL``, ``WAYPOINT_EMBEDDINGS_URL``). An endpoint an admin registered
  (``registered=True``) is allowed too while the setting is empty, but only at a public
  address: loopback, private, link-local (the cloud metadata service) and other reserved
  addresses must be listed;
- a client's key goes only to its own endpoint: :meth:`LLMClient.post` refuses another origin,
  and a redirect is followed only on the same origin.

The transport is the standard library's ``urllib``: one JSON POST with a timeout is all it has to
do. The ``openai`` package would bring its own retries, which hold no slot of ours and follow
none of our settings (we would turn them off), and it and ``httpx`` a dozen packages more.
"""

from __future__ import annotations

import base64
import http.client
import ipaddress
import json
import os
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from django.conf import settings

from .llm_limits import LimitWait, request_slot

SCHEMES = {"http": 80, "https": 443}

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


def _reason(code: int) -> str:
    """The standard reason of an HTTP status, never the server's own words."""
    try:
        return http.HTTPStatus(code).phrase
    except ValueError:
        return "unknown status"


def origin(url: str) -> str:
    """``scheme://host:port`` of a URL (the default port written out), lower case."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        raise LLMError(f"refused {url}: its port is not a number") from None
    scheme = parts.scheme.lower()
    return f"{scheme}://{(parts.hostname or '').lower()}:{port or SCHEMES.get(scheme, 0)}"


def _hostport(url: str) -> str:
    return origin(url).split("://", 1)[1]


def configured_urls() -> list[str]:
    """The endpoints the environment configures: the default model, the judge, the embedder."""
    urls = [
        settings.LLM_BASE_URL,
        settings.WAYPOINT_JUDGE_URL,
        os.getenv("WAYPOINT_EMBEDDINGS_URL", ""),
    ]
    return [url for url in urls if url]


def listed(url: str) -> bool:
    """Whether the allow-list names the URL's host: the setting (``host`` or ``host:port``) or
    the origin of an endpoint the environment configures."""
    hostport = _hostport(url)
    host = hostport.rsplit(":", 1)[0].strip("[]")
    names = {str(name).strip().lower() for name in settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS}
    if host in names or hostport in names:
        return True
    return origin(url) in {origin(u) for u in configured_urls()}


def _public(address: str) -> bool:
    found = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped:
        found = found.ipv4_mapped
    return found.is_global and not found.is_multicast


def check_url(url: str, *, registered: bool = False) -> None:
    """Refuse, before connecting, a URL requests may not go to (the rules are the module's)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise LLMError(f"refused {url}: only http and https URLs are asked")
    if not parts.hostname:
        raise LLMError(f"refused {url}: it names no host")
    if parts.username is not None or parts.password is not None:
        raise LLMError(f"refused {url}: credentials go in the endpoint's key, not the URL")
    host = parts.hostname.lower()
    if listed(url):
        return
    if not registered or settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS:
        raise LLMError(f"refused {url}: {host} is not in WAYPOINT_ENDPOINT_ALLOWED_HOSTS")
    try:
        port = parts.port or SCHEMES[scheme]
        addresses = {info[4][0] for info in socket.getaddrinfo(host, port)}
    except (OSError, UnicodeError):
        raise LLMError(f"refused {url}: {host} does not resolve") from None
    for address in sorted(addresses):
        if not _public(address):
            raise LLMError(
                f"refused {url}: {host} is at {address}, not a public address (list it in "
                "WAYPOINT_ENDPOINT_ALLOWED_HOSTS to allow it)"
            )


class _Refused(Exception):
    """A redirect the opener does not follow."""


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects are followed on the endpoint's own origin only: the request carries its key."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001, ANN201
        target = urljoin(req.full_url, newurl)
        if origin(target) != origin(req.full_url):
            fp.close()
            raise _Refused(
                f"HTTP {code} from {req.full_url} redirects to {origin(target)}: not followed "
                "to another host"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _opener() -> urllib.request.OpenerDirector:
    """urllib's opener with HTTP and HTTPS alone (no file, ftp or data handler)."""
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        urllib.request.UnknownHandler(),
        urllib.request.HTTPHandler(),
        urllib.request.HTTPSHandler(),
        urllib.request.HTTPDefaultErrorHandler(),
        _SameOriginRedirects(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    return opener


class LLMClient:
    """One OpenAI-compatible API (``base_url`` like ``http://host:8000/v1``) and model."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        *,
        timeout_s: float | None = None,
        registered: bool = False,
    ) -> None:
        """``registered``: an admin registered this endpoint (``agents.endpoints``), so its
        host is allowed while ``WAYPOINT_ENDPOINT_ALLOWED_HOSTS`` is empty, at a public
        address."""
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.registered = registered
        self.timeout_s = float(settings.LLM_TIMEOUT_S if timeout_s is None else timeout_s)

    def __repr__(self) -> str:  # never the key
        return f"LLMClient({self.base_url!r}, {self.model!r})"

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
        if origin(url) != origin(self.base_url):
            raise LLMError(f"refused {url}: this client asks {origin(self.base_url)} only")
        check_url(url, registered=self.registered)
        opener = _opener()
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
                    opener.open(request, timeout=self.timeout_s) as response,
                ):
                    raw = response.read()
            except LimitWait as exc:
                raise LLMError(str(exc)) from None
            except _Refused as exc:
                raise LLMError(str(exc)) from None
            except urllib.error.HTTPError as exc:
                exc.close()
                last = f"HTTP {exc.code} {_reason(exc.code)} from {url}"
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
                        f"{url} answered something that is not JSON ({len(raw)} bytes)"
                    ) from None
        raise LLMError(f"gave up after {attempts} requests: {last}")

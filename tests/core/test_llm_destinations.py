"""Where the one client sends requests (and its key): http and https only, to hosts of the
allow-list (or, while it is empty, to a registered endpoint at a public address), redirects
followed on the endpoint's own origin alone, and no remote body in any error message."""

from __future__ import annotations

import socket
import threading

import pytest

from core.llm import LLMClient, LLMError, check_url


class Listener:
    """A TCP port that counts the connections made to it (and reads what they send)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.received: list[bytes] = []
        self.stop = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.received.append(conn.recv(65536))
                except OSError:
                    self.received.append(b"")

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture
def listener():
    found = Listener()
    yield found
    found.close()


@pytest.fixture(autouse=True)
def nothing_configured(settings):
    settings.LLM_BASE_URL = ""
    settings.WAYPOINT_JUDGE_URL = ""
    settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS = []
    settings.LLM_HTTP_RETRIES = 0
    settings.LLM_BACKOFF_MS = 1


def ask(url: str, *, registered: bool = False) -> str:
    with pytest.raises(LLMError) as caught:
        LLMClient(url, "m", "sk-secret", registered=registered, timeout_s=2).chat("Hello")
    return str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "file:///proc/self/environ#/chat/completions",
        "ftp://127.0.0.1/v1",
        "data:text/plain,hello",
        "gopher://127.0.0.1:70/",
    ],
)
def test_it_refuses_every_scheme_but_http_and_https(url):
    message = ask(url, registered=True)
    assert message.startswith("refused ") and "only http and https URLs are asked" in message
    assert "PATH" not in message and "sk-" not in message


def test_an_unlisted_host_is_refused_before_connecting(listener):
    assert ask(listener.url) == (
        f"refused {listener.url}/chat/completions: 127.0.0.1 is not in "
        "WAYPOINT_ENDPOINT_ALLOWED_HOSTS"
    )
    assert listener.received == []


@pytest.mark.parametrize(
    "url, address",
    [
        ("http://169.254.169.254/latest/meta-data", "169.254.169.254"),
        ("http://127.0.0.1:{port}/v1", "127.0.0.1"),
        ("http://10.1.2.3/v1", "10.1.2.3"),
        ("http://[::1]:{port}/v1", "::1"),
        ("http://[::ffff:169.254.169.254]/v1", "::ffff:169.254.169.254"),
        ("http://0.0.0.0:{port}/v1", "0.0.0.0"),
    ],
)
def test_a_registered_endpoint_at_a_private_address_is_refused_unless_listed(
    listener, url, address
):
    url = url.format(port=listener.port)
    message = ask(url, registered=True)
    assert message.endswith(
        f"is at {address}, not a public address (list it in WAYPOINT_ENDPOINT_ALLOWED_HOSTS to "
        "allow it)"
    ), message
    assert listener.received == []


def test_a_listed_host_is_asked_with_its_key(llm, settings):
    server = llm([(200, "Fine.", 0)])
    settings.LLM_BASE_URL = ""
    settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1"]
    assert LLMClient(server.url, "m", "sk-listed").chat("Hello").text == "Fine."
    assert server.requests[0]["auth"] == "Bearer sk-listed"


def test_a_listed_port_allows_that_port_only(listener, settings):
    settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1:1"]
    assert "is not in WAYPOINT_ENDPOINT_ALLOWED_HOSTS" in ask(listener.url, registered=True)
    assert listener.received == []


def test_a_registered_endpoint_outside_an_explicit_list_is_refused(listener, settings):
    settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS = ["models.example"]
    check_url("http://models.example/v1")  # listed: allowed (nothing is resolved)
    message = ask("http://198.51.100.7/v1", registered=True)
    assert message == (
        "refused http://198.51.100.7/v1/chat/completions: 198.51.100.7 is not in "
        "WAYPOINT_ENDPOINT_ALLOWED_HOSTS"
    )


def test_credentials_in_the_url_are_refused():
    with pytest.raises(LLMError, match="credentials go in the endpoint's key, not the URL"):
        check_url("https://user:pass@api.example/v1", registered=True)


def test_the_key_goes_to_the_client_s_own_origin_only(listener, llm):
    server = llm([])
    client = LLMClient(server.url, "m", "sk-test")
    with pytest.raises(LLMError) as caught:
        client.post(f"{listener.url}/chat/completions", {"model": "m"})
    assert str(caught.value) == (
        f"refused {listener.url}/chat/completions: this client asks "
        f"http://127.0.0.1:{server.url.split(':')[2].split('/')[0]} only"
    )
    assert listener.received == [] and server.requests == []


def test_a_redirect_to_another_host_is_not_followed(listener, llm, settings):
    server = llm([(302, b"", 0, {"Location": f"{listener.url}/chat/completions"})])
    settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1"]  # both listed: still not followed
    message = ask(server.url)
    assert message == (
        f"HTTP 302 from {server.url}/chat/completions redirects to "
        f"http://127.0.0.1:{listener.port}: not followed to another host"
    )
    assert len(server.requests) == 1 and listener.received == []


def test_an_error_message_carries_the_status_never_the_body(llm):
    secret = b"AWS_SECRET_ACCESS_KEY=abc123 internal admin page"
    server = llm([(403, secret, 0), (200, secret, 0)])
    first = ask(server.url)
    assert first == f"HTTP 403 Forbidden from {server.url}/chat/completions"
    second = ask(server.url)
    assert second == (
        f"{server.url}/chat/completions answered something that is not JSON ({len(secret)} bytes)"
    )
    assert "abc123" not in first + second


def test_the_client_s_repr_has_no_key():
    assert "sk-secret" not in repr(LLMClient("https://api.example/v1", "m", "sk-secret"))

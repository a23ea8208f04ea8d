"""A local OpenAI-compatible chat completions server for the LLM proposer's tests, and the
``llm`` fixture that starts one and points the settings at it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class Server:
    """Answers each request with the next scripted reply: (status, content, delay s[, headers]).

    A 200's content becomes a chat completion's message (JSON-encoded unless it is a string);
    ``bytes`` content is sent as the body as it is, whatever the status."""

    def __init__(self, replies: list[tuple[int, object, float]] | Callable[[dict], tuple]):
        self.replies = replies
        self.requests: list[dict] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(
                        {
                            "body": body,
                            "auth": self.headers.get("Authorization"),
                            "at": time.time(),
                        }
                    )
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                    replies = server.replies
                    reply = replies(body) if callable(replies) else replies.pop(0)
                status, content, delay = reply[:3]
                headers = reply[3] if len(reply) > 3 else {"Retry-After": "0"}
                time.sleep(delay)
                with server.lock:
                    server.in_flight -= 1
                if isinstance(content, bytes):
                    payload = content
                elif status == 200:
                    data = {
                        "choices": [
                            {
                                "message": {
                                    "content": content
                                    if isinstance(content, str)
                                    else json.dumps(content)
                                }
                            }
                        ],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 20},
                    }
                    payload = json.dumps(data).encode()
                else:
                    payload = b'{"error": "busy"}'
                try:
                    self.send_response(status)
                    if status == 429 or len(reply) > 3:
                        for name, value in headers.items():
                            self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def llm(settings):
    servers = []

    def start(replies):
        server = Server(replies)
        servers.append(server)
        settings.LLM_BASE_URL = server.url
        settings.LLM_MODEL = "test-vl"
        settings.LLM_API_KEY = "sk-test"
        settings.LLM_BACKOFF_MS = 1
        settings.LLM_TIMEOUT_S = 2
        return server

    yield start
    for server in servers:
        server.close()

"""How the environment server is served: by ``manage.py env_server`` in the foreground, or in a
thread of the calling process (the tests, ``bench/bench_rl.py``, a trainer that keeps the
server beside it)."""

from __future__ import annotations

import threading
import time
from typing import Any

import uvicorn


def uvicorn_config(app: Any, host: str, port: int) -> uvicorn.Config:
    """The server's settings. No per-message deflate: a screenshot in base64 hardly compresses,
    and deflating each observation cost more (~25 ms a step) than the rest of its overhead."""
    return uvicorn.Config(
        app, host=host, port=port, log_level="warning", ws_per_message_deflate=False
    )


class ServedInThread:
    """``app`` served on ``host:port`` from a thread of this process, until :meth:`stop`."""

    def __init__(self, app: Any, port: int, host: str = "127.0.0.1", timeout: float = 20.0):
        self.url = f"http://{host}:{port}"
        self.server = uvicorn.Server(uvicorn_config(app, host, port))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                self.stop()
                raise RuntimeError(f"the environment server at {self.url} did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)

"""The environment server: Waypoint's devices behind OpenEnv's protocol (``openenv-core``).

OpenEnv's ``HTTPEnvServer`` serves the protocol: a session per WebSocket at ``/ws`` (reset,
step, state, close, as its ``EnvClient`` speaks), each with its own :class:`WaypointEnvironment`,
at most ``max_sessions`` at once; ``/schema``, ``/metadata`` and ``/health`` describe it.
Around it:

- every request but ``/health`` carries one of the API's tokens (``Authorization: Token <key>``,
  or ``Bearer``, or HTTP Basic auth with the key as password, which OpenEnv's own client sends
  for a URL ``http://token:<key>@host:port``); its user must be a member of the server's
  project, and one who may see its gold when the project hides it (the rewards tell the gold);
- ``GET /info`` says what the server poses: its tasks, the action formats, the screen size of
  its devices, its limits and reward config;
- the stateless ``POST /reset`` and ``/step`` of OpenEnv's HTTP API keep no session, so they
  answer with a 409 saying to connect to ``/ws``: a rollout needs its device between requests.

A session's environment hands every request to its :class:`rl.sessions.Session`. A session
ends when its client closes it, when the connection breaks, or when the client sends no request
for ``idle_s`` (a client that vanished without a word: the server tells it why and closes);
its episode ends as it stands and its device is freed.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.db import connection
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from openenv.core.env_server import ConcurrencyConfig, Environment, HTTPEnvServer
from openenv.core.env_server.types import EnvironmentMetadata
from rest_framework.authtoken.models import Token

from agents.pool import take_device
from devices.services import connect
from devices.services.adb import DEVICE_ERRORS, DeviceUnavailable
from trajectories.access import projects_of
from trajectories.gold import can_see_gold, hidden_message
from trajectories.validation import InvalidData

from .episode import EpisodeError, Setup, project_settings
from .protocol import FORMATS, WaypointAction, WaypointObservation, WaypointState
from .queue import DeviceQueue
from .sessions import ServerConfig, Session

OPEN_PATHS = ("/health",)
NO_HTTP_SESSION = (
    "the HTTP reset and step keep no session: connect to the WebSocket at /ws (OpenEnv's "
    "EnvClient does), where a rollout keeps its device between requests"
)
TOKEN_HELP = "send one of the API's tokens as the header Authorization: Token <token>"


@dataclass
class Caller:
    user: Any
    kind: str  # "http" or "websocket"
    closed_why: str = ""  # why the server closed the session (its idle time)


# Who made the request being served: set by the token check, read by the environment's factory
# (OpenEnv builds a session's environment inside the WebSocket's own request).
CALLER: ContextVar[Caller | None] = ContextVar("rl_caller", default=None)


class WaypointEnvironment(Environment):
    """One session's environment (the server's config is the class's: ``environment_for``)."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    server: ServerConfig

    def __init__(self) -> None:
        super().__init__()
        caller = CALLER.get()
        if caller is None:
            raise EpisodeError("no caller: every request carries an API token")
        self.caller = caller
        self.session = Session(self.server, caller.user) if caller.kind == "websocket" else None

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> WaypointObservation:
        if self.session is None:
            raise EpisodeError(NO_HTTP_SESSION)
        args = dict(kwargs)
        if seed is not None:
            args["seed"] = seed
        return self.session.reset(args)

    def step(
        self, action: WaypointAction, timeout_s: float | None = None, **kwargs: Any
    ) -> WaypointObservation:
        if self.session is None:
            raise EpisodeError(NO_HTTP_SESSION)
        return self.session.step(action)

    @property
    def state(self) -> WaypointState:
        return self.session.state() if self.session is not None else WaypointState()

    def close(self) -> None:
        if self.session is not None:
            self.session.close(self.caller.closed_why or "its trainer closed the session")

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="waypoint",
            description="Android GUI tasks on Waypoint's devices, with STAMP's task, format and "
            "memory rewards",
            version="1",
        )


def environment_for(server: ServerConfig) -> type[WaypointEnvironment]:
    """The environment class OpenEnv builds each session's environment from."""
    return type("WaypointEnvironment", (WaypointEnvironment,), {"server": server})


# ---------------------------------------------------------------------- tokens


def token_of(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The API token of a request: ``Token``/``Bearer`` key, or Basic auth's password."""
    value = next((v.decode("latin-1") for k, v in headers if k.lower() == b"authorization"), "")
    scheme, _, rest = value.strip().partition(" ")
    if scheme.lower() in ("token", "bearer") and rest.strip():
        return rest.strip()
    if scheme.lower() == "basic" and rest.strip():
        try:
            pair = base64.b64decode(rest.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return pair.partition(":")[2] or None
    return None


def check_caller(key: str | None, setup: Setup) -> tuple[Any, tuple[int, str] | None]:
    """The token's user, or the status and message refusing the request."""
    try:
        if not key:
            return None, (401, TOKEN_HELP)
        token = Token.objects.select_related("user").filter(key=key).first()
        user = token.user if token is not None else None
        if user is None or not user.is_active:
            return None, (401, f"the token is not valid: {TOKEN_HELP}")
        project = setup.project
        if not projects_of(user).filter(pk=project.pk).exists():
            return None, (403, f"{user.get_username()} is not a member of project {project.pk}")
        if not can_see_gold(user, project):
            return None, (403, hidden_message("train on its tasks (the rewards tell its gold)"))
        return get_user_model().objects.get(pk=user.pk), None
    finally:
        connection.close()


class TokenAuth:
    """ASGI middleware: the token check of every request, and a WebSocket session's idle
    time (see the module's docstring)."""

    def __init__(self, app, setup: Setup, idle_s: float) -> None:
        self.app = app
        self.setup = setup
        self.idle_s = idle_s

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        key = token_of(scope.get("headers") or [])
        user, refused = await sync_to_async(check_caller, thread_sensitive=False)(key, self.setup)
        if refused is not None:
            await refuse(scope, receive, send, *refused)
            return
        caller = Caller(user, scope["type"])
        if scope["type"] == "websocket":
            receive, send = self.idle_bounded(caller, receive, send)
        reset = CALLER.set(caller)
        try:
            await self.app(scope, receive, send)
        finally:
            CALLER.reset(reset)

    def idle_bounded(self, caller: Caller, receive, send):
        """The session's ``receive`` and ``send``: the session ends when its trainer sends
        nothing for ``idle_s`` (``receive`` waits for the next request only between requests: a
        request being served, however long, is not idle time). The trainer is told why, the
        connection is closed (what the server would send after that is dropped), and the
        session's environment closes, which ends its episode and frees its device."""

        async def sending(message: dict[str, Any]) -> None:
            if caller.closed_why:
                return
            try:
                await send(message)
            except OSError:
                # The client left first: closing its connection is moot (OpenEnv's handler
                # closes it after every session and would report the client's leaving).
                if message["type"] != "websocket.close":
                    raise

        async def bounded() -> dict[str, Any]:
            try:
                return await asyncio.wait_for(receive(), self.idle_s)
            except TimeoutError:
                caller.closed_why = f"its session sent no request for {self.idle_s:g} s"
                said = {
                    "type": "error",
                    "data": {
                        "message": f"{caller.closed_why}: it is closed, its device released",
                        "code": "SESSION_IDLE",
                    },
                }
                await send({"type": "websocket.send", "text": json.dumps(said)})
                await send({"type": "websocket.close", "code": 1000})
                return {"type": "websocket.disconnect", "code": 1000}

        return bounded, sending


async def refuse(scope, receive, send, status: int, message: str) -> None:
    body = json.dumps({"detail": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if status == 401:
        headers.append((b"www-authenticate", b'Token realm="waypoint"'))
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    await receive()  # websocket.connect
    if "websocket.http.response" in scope.get("extensions") or {}:
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})


# ---------------------------------------------------------------------- the app


def screen_size(setup: Setup) -> dict[str, int] | None:
    """The screen of the pool's first device (the Gym client's observation space)."""
    for entry in setup.pool():
        try:
            facts = connect(entry["serial"], entry["adb_server"]).facts
        except (DeviceUnavailable, *DEVICE_ERRORS):
            continue
        if facts.width:
            return {"width": facts.width, "height": facts.height}
    return None


def server_info(server: ServerConfig) -> dict[str, Any]:
    setup = server.setup
    try:
        stored, rewards = project_settings(setup.project)
        pool = setup.pool()
        return {
            "project": setup.project.pk,
            "tasks": list(setup.tasks),
            "formats": list(FORMATS),
            "devices": len(pool),
            "screen": screen_size(setup),
            "max_sessions": server.max_sessions,
            "idle_s": server.idle_s,
            "stored": stored,
            "rewards": rewards.as_dict(),
        }
    finally:
        connection.close()


def build_app(
    setup: Setup,
    *,
    max_sessions: int,
    idle_s: float,
    wait_s: float,
    queue: DeviceQueue | None = None,
) -> TokenAuth:
    """The environment server's ASGI application, for uvicorn (``manage.py env_server``)."""
    server = ServerConfig(
        setup=setup,
        queue=queue or DeviceQueue(take_device),
        max_sessions=max_sessions,
        idle_s=idle_s,
        wait_s=wait_s,
    )
    app = FastAPI(title="Waypoint RL environment", version="1", docs_url=None, redoc_url=None)
    HTTPEnvServer(
        environment_for(server),
        WaypointAction,
        WaypointObservation,
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=max_sessions, session_timeout=idle_s
        ),
    ).register_routes(app)

    @app.get("/info")
    async def info() -> dict[str, Any]:
        return await sync_to_async(server_info, thread_sensitive=False)(server)

    @app.exception_handler(EpisodeError)
    async def episode_error(request: Request, exc: EpisodeError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.exception_handler(InvalidData)
    async def invalid_data(request: Request, exc: InvalidData) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=400)

    return TokenAuth(app, setup, idle_s)

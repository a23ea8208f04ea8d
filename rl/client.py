"""A trainer's client of the environment server: OpenEnv's ``EnvClient`` with Waypoint's types.

    from rl.client import WaypointEnv
    from rl.protocol import WaypointAction

    with WaypointEnv("http://127.0.0.1:8765", token="...") as env:
        result = env.reset(seed=1, task="weather-temp-now", run="grpo-1")
        result = env.step(WaypointAction(text=model_output, format="mobile_use"))
        result.observation.info["reward"], result.reward, result.done

It sends the API token as a header (never in the URL), takes observations of any size (a
screenshot of a large phone is more than the megabyte a WebSocket message gets by default) and
waits as long as a reset may wait in line for a device. Importable without Django.
"""

from __future__ import annotations

import json
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect as ws_connect

from .protocol import WaypointAction, WaypointObservation, WaypointState

WAIT_S = 900.0  # a reset may wait in line for a device (the server's WAYPOINT_RL_DEVICE_WAIT_S)


class WaypointEnv(EnvClient[WaypointAction, WaypointObservation, WaypointState]):
    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        connect_timeout_s: float = 10.0,
        message_timeout_s: float = WAIT_S,
    ) -> None:
        super().__init__(
            base_url, connect_timeout_s=connect_timeout_s, message_timeout_s=message_timeout_s
        )
        self._token = token

    def connect(self) -> WaypointEnv:
        if self._ws is not None:
            return self
        try:
            self._ws = ws_connect(
                self._ws_url,
                additional_headers={"Authorization": f"Token {self._token}"},
                open_timeout=self._connect_timeout,
                max_size=None,
                compression=None,  # a screenshot in base64 hardly compresses: not worth the time
                proxy=None,
                legacy=True,
            )
        except InvalidStatus as exc:
            raise ConnectionError(f"{self._ws_url} refused the session: {refusal(exc)}") from None
        except OSError as exc:
            raise ConnectionError(f"{self._ws_url} did not answer: {exc}") from None
        return self

    def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            return super()._send_and_receive(message)
        except ConnectionClosed as exc:
            # The server may have said why before it closed (a session past its limit).
            said = self._last_word()
            self._ws = None
            if said:
                raise RuntimeError(
                    f"Server error: {said.get('message', '')} (code: {said.get('code', '')})"
                ) from None
            raise ConnectionError(f"the server closed the session ({exc})") from None

    def _last_word(self) -> dict[str, Any] | None:
        """The error the server sent before it closed the connection, if it sent one."""
        try:
            answer = json.loads(self._ws.recv(timeout=0))
        except (ConnectionClosed, TimeoutError, ValueError):
            return None
        return answer.get("data") if answer.get("type") == "error" else None

    def _step_payload(self, action: WaypointAction) -> dict[str, Any]:
        return action.model_dump(exclude_defaults=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[WaypointObservation]:
        observation = WaypointObservation(
            **payload.get("observation", {}),
            done=payload.get("done", False),
            reward=payload.get("reward"),
        )
        return StepResult(observation=observation, reward=observation.reward, done=observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> WaypointState:
        return WaypointState(**payload)


def refusal(exc: InvalidStatus) -> str:
    """What the server said when it refused the WebSocket: its status and its message."""
    response = exc.response
    try:
        detail = json.loads(response.body or b"{}").get("detail", "")
    except (ValueError, AttributeError):
        detail = ""
    return f"HTTP {response.status_code}" + (f": {detail}" if detail else "")

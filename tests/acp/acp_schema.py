"""Every message between the test's ACP client and `openvaala acp`, checked against the ACP
schema (the SDK's models, generated from the protocol's schema.json): each request's and
notification's params by its method, each response's result by the method it answers, strictly
(no field of the wrong type or shape passes). A test installs it as the connection's observer
and calls `check()` at the end."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acp import schema as s
from acp.connection import StreamDirection, StreamEvent
from pydantic import BaseModel, ValidationError

# method → (params model, result model); None where a method has no result body to check.
METHODS: dict[str, tuple[type[BaseModel], type[BaseModel] | None]] = {
    # the client's requests and notifications
    "initialize": (s.InitializeRequest, s.InitializeResponse),
    "session/new": (s.NewSessionRequest, s.NewSessionResponse),
    "session/load": (s.LoadSessionRequest, s.LoadSessionResponse),
    "session/list": (s.ListSessionsRequest, s.ListSessionsResponse),
    "session/prompt": (s.PromptRequest, s.PromptResponse),
    "session/cancel": (s.CancelNotification, None),
    "session/set_mode": (s.SetSessionModeRequest, s.SetSessionModeResponse),
    "session/set_config_option": (
        s.SetSessionConfigOptionSelectRequest,
        s.SetSessionConfigOptionResponse,
    ),
    # the agent's requests and notifications
    "session/update": (s.SessionNotification, None),
    "session/request_permission": (s.RequestPermissionRequest, s.RequestPermissionResponse),
    "fs/read_text_file": (s.ReadTextFileRequest, s.ReadTextFileResponse),
    "fs/write_text_file": (s.WriteTextFileRequest, s.WriteTextFileResponse),
    "terminal/create": (s.CreateTerminalRequest, s.CreateTerminalResponse),
    "terminal/output": (s.TerminalOutputRequest, s.TerminalOutputResponse),
    "terminal/wait_for_exit": (s.WaitForTerminalExitRequest, s.WaitForTerminalExitResponse),
    "terminal/kill": (s.KillTerminalRequest, s.KillTerminalResponse),
    "terminal/release": (s.ReleaseTerminalRequest, s.ReleaseTerminalResponse),
}


@dataclass
class SchemaCheck:
    messages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, event: StreamEvent) -> None:
        self.messages.append((event.direction.value, event.message))

    def methods(self, direction: StreamDirection = StreamDirection.INCOMING) -> list[str]:
        """The methods of the requests and notifications that came in that direction."""
        return [m["method"] for d, m in self.messages if d == direction.value and "method" in m]

    def check(self) -> int:
        """How many messages were checked; AssertionError naming the first that is not valid."""
        asked: dict[tuple[str, object], str] = {}  # (direction, id) → method
        checked = 0
        for direction, message in self.messages:
            try:
                checked += self._one(direction, message, asked)
            except ValidationError as exc:
                raise AssertionError(
                    f"{direction} {message} breaks the ACP schema: {exc}"
                ) from None
        assert checked, "no message was captured"
        return checked

    @staticmethod
    def _one(direction: str, message: dict[str, Any], asked: dict[tuple[str, object], str]) -> int:
        assert message.get("jsonrpc") == "2.0", message
        if "method" in message:
            method = message["method"]
            assert method in METHODS, f"a method the ACP schema does not have: {method}"
            METHODS[method][0].model_validate(message.get("params") or {}, strict=False)
            if "id" in message:
                asked[(direction, message["id"])] = method
            return 1
        other = "outgoing" if direction == "incoming" else "incoming"
        method = asked.pop((other, message.get("id")), None)
        assert method is not None, f"a response to no request: {message}"
        if "error" in message:
            s.Error.model_validate(message["error"])
        elif (result := METHODS[method][1]) is not None:
            result.model_validate(message["result"] if message["result"] is not None else {})
        return 1

"""Codex's JSON-RPC framing, sans I/O: one message per websocket frame or JSONL line, with no
`"jsonrpc"` member (Codex omits it; one sent is accepted and ignored).

Errors are OpenVaala's error tree (`openvaala_server.errors`): their code, message and
`data.kind` are what a Codex client is told."""

from __future__ import annotations

from openvaala_server import errors
from openvaala_server.protocol import codec, jsonrpc
from openvaala_server.protocol.json_types import JsonMapping, JsonObject

# The envelopes and their reading are OpenVaala's own (protocol/jsonrpc.py): only the framing
# differs (no "jsonrpc" member), and what is sent.
from openvaala_server.protocol.jsonrpc import Invalid, Notification, Request, RequestId, Response

__all__ = ["Incoming", "Invalid", "Notification", "Request", "RequestId", "Response"]

Incoming = Request | Notification | Response | Invalid


def decode_object(text: str | bytes) -> JsonObject:
    """A message's JSON object, or `{}` for anything else (a line that is not one)."""
    try:
        value = codec.loads(text)
    except codec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def parse(frame: str | bytes) -> Incoming:
    return jsonrpc.parse(frame, require_version=False)


def request(msg_id: RequestId, method: str, params: JsonMapping) -> str:
    return codec.dumps({"id": msg_id, "method": method, "params": params}).decode()


def notification(method: str, params: JsonMapping) -> str:
    return codec.dumps({"method": method, "params": params}).decode()


def result(msg_id: RequestId, value: object) -> str:
    return codec.dumps({"id": msg_id, "result": value}).decode()


def error(msg_id: RequestId | None, err: errors.OpenVaalaError) -> str:
    return codec.dumps({"id": msg_id, "error": err.to_wire()}).decode()

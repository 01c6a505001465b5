"""JSON-RPC 2.0 envelopes, sans I/O: classify an incoming frame, build outgoing ones.

One message per websocket text frame. Batches are not part of the protocol and are refused with
`invalid_request` (they would let one frame start unbounded work).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeGuard

from openvaala_server import errors
from openvaala_server.protocol import codec
from openvaala_server.protocol.json_types import JsonMapping, JsonObject, JsonValue

RequestId = int | str


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    params: JsonObject


@dataclass(frozen=True)
class Notification:
    method: str
    params: JsonObject


@dataclass(frozen=True)
class Response:
    id: RequestId | None
    result: JsonValue = None
    error: JsonObject | None = None


@dataclass(frozen=True)
class Invalid:
    """A frame that could not be understood; `id` is echoed back when it could be read."""

    id: RequestId | None
    error: errors.OpenVaalaError


Incoming = Request | Notification | Response | Invalid


def _valid_id(value: object) -> TypeGuard[RequestId]:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def parse(frame: str | bytes, *, require_version: bool = True) -> Incoming:
    """`require_version=False`: a message without `"jsonrpc"` is read too, as Codex frames them
    (openvaala_server/codex/rpc.py)."""
    try:
        message = codec.loads(frame)
    except codec.DecodeError as exc:
        frame_id = exc.value.get("id") if isinstance(exc.value, dict) else None
        if _valid_id(frame_id):
            return Invalid(frame_id, errors.ParseError(f"the frame is not usable JSON: {exc}"))
        return Invalid(None, errors.ParseError("the frame is not valid JSON"))
    if isinstance(message, list):
        return Invalid(
            None, errors.InvalidRequest("batches are not supported: send one message per frame")
        )
    if not isinstance(message, dict):
        return Invalid(None, errors.InvalidRequest("a message must be a JSON object"))
    raw_id = message.get("id")
    msg_id = raw_id if _valid_id(raw_id) else None
    if message.get("jsonrpc", None if require_version else "2.0") != "2.0":
        return Invalid(msg_id, errors.InvalidRequest('"jsonrpc" must be "2.0"'))
    if "method" not in message:
        if ("result" in message or "error" in message) and "id" in message:
            error = message.get("error")
            if error is not None and not isinstance(error, dict):
                error = {"message": str(error)}  # still an error, whatever its shape
            return Response(msg_id, message.get("result"), error)
        return Invalid(msg_id, errors.InvalidRequest('a request needs a "method"'))
    method = message["method"]
    if not isinstance(method, str):
        return Invalid(msg_id, errors.InvalidRequest('"method" must be a string'))
    params = message.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return Invalid(msg_id, errors.InvalidParams('"params" must be an object'))
    if "id" not in message:
        return Notification(method, params)
    if msg_id is None:
        return Invalid(None, errors.InvalidRequest('"id" must be a string or an integer'))
    return Request(msg_id, method, params)


def request(msg_id: RequestId, method: str, params: JsonMapping | None = None) -> bytes:
    return codec.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}})


def notification(method: str, params: JsonMapping) -> bytes:
    return codec.dumps({"jsonrpc": "2.0", "method": method, "params": params})


def result(msg_id: RequestId, value: object) -> bytes:
    return codec.dumps({"jsonrpc": "2.0", "id": msg_id, "result": value})


def error(msg_id: RequestId | None, err: errors.OpenVaalaError) -> bytes:
    return codec.dumps({"jsonrpc": "2.0", "id": msg_id, "error": err.to_wire()})

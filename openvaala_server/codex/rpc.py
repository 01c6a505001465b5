"""Codex's JSON-RPC framing, sans I/O: one message per websocket frame or JSONL line, with no
`"jsonrpc"` member (Codex omits it; one sent is accepted and ignored).

Errors are OpenVaala's error tree (`openvaala_server.errors`): their code, message and
`data.kind` are what a Codex client is told."""

from __future__ import annotations

from dataclasses import dataclass

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
    """A client's answer to a request the server sent it (an approval)."""

    id: RequestId
    result: JsonValue
    error: JsonObject | None


@dataclass(frozen=True)
class Invalid:
    id: RequestId | None
    error: errors.OpenVaalaError


Incoming = Request | Notification | Response | Invalid


def _id(value: object) -> RequestId | None:
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def parse(frame: str | bytes) -> Incoming:
    try:
        message = codec.loads(frame)
    except codec.DecodeError:
        return Invalid(None, errors.ParseError("the message is not valid JSON"))
    if not isinstance(message, dict):
        return Invalid(None, errors.InvalidRequest("a message must be a JSON object"))
    msg_id = _id(message.get("id"))
    method = message.get("method")
    if method is None:
        if msg_id is not None and ("result" in message or "error" in message):
            error = message.get("error")
            return Response(
                msg_id, message.get("result"), error if isinstance(error, dict) else None
            )
        return Invalid(msg_id, errors.InvalidRequest('a request needs a "method"'))
    if not isinstance(method, str):
        return Invalid(msg_id, errors.InvalidRequest('"method" must be a string'))
    params = message.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return Invalid(msg_id, errors.InvalidParams('"params" must be an object'))
    if "id" not in message:
        return Notification(method, params)
    if msg_id is None:
        return Invalid(None, errors.InvalidRequest('"id" must be a string or an integer'))
    return Request(msg_id, method, params)


def request(msg_id: RequestId, method: str, params: JsonMapping) -> str:
    return codec.dumps({"id": msg_id, "method": method, "params": params}).decode()


def notification(method: str, params: JsonMapping) -> str:
    return codec.dumps({"method": method, "params": params}).decode()


def result(msg_id: RequestId, value: object) -> str:
    return codec.dumps({"id": msg_id, "result": value}).decode()


def error(msg_id: RequestId | None, err: errors.OpenVaalaError) -> str:
    return codec.dumps({"id": msg_id, "error": err.to_wire()}).decode()

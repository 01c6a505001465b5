"""The JSON-RPC edges pygls leaves unanswered: a request without `params`, a message that does not
fit its method's shape, invalid JSON, batches; and every error the bridge answers carries
`data.kind` (docs/editors.md, "Errors"). Daemon errors are logged as one line, not a traceback."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any, TypeGuard

from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol

from openvaala_server.protocol.json_types import JsonObject

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
NOT_INITIALIZED = -32002  # LSP's ServerNotInitialized

# `data.kind` for JSON-RPC's own error codes, when the error has none.
KINDS = {
    PARSE_ERROR: "parse_error",
    INVALID_REQUEST: "invalid_request",
    -32601: "method_not_found",
    INVALID_PARAMS: "invalid_params",
    -32603: "internal",
    -32800: "cancelled",
    NOT_INITIALIZED: "not_initialized",
}
# What may come before `initialize` (LSP: anything else is refused, `exit` is obeyed).
_BEFORE_INITIALIZE = ("initialize", "exit")


class _Answered:
    """A message already answered with an error while it was read: nothing more to do."""


def with_kind(error: ResponseError) -> ResponseError:
    data = error.data if isinstance(error.data, dict) else {}
    if "kind" not in data:
        kind = KINDS.get(error.code, "error")
        error = ResponseError(code=error.code, message=error.message, data={**data, "kind": kind})
    return error


def error_response(msg_id: str | int | None, code: int, message: str) -> JsonObject:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "error": {"code": code, "message": message, "data": {"kind": KINDS[code]}},
    }


def _valid_id(value: object) -> TypeGuard[str | int]:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _bad_shape(data: Mapping[str, object]) -> str | None:
    """Why a message's id or method is not JSON-RPC's (an id is a string or a number, a method
    a string), or None."""
    if data["jsonrpc"] != "2.0":  # pygls would drop it as unknown: the request would hang
        return f'jsonrpc must be "2.0", not {json.dumps(data["jsonrpc"])}'
    if "id" in data and data["id"] is not None and not _valid_id(data["id"]):
        return f"the id must be a string or a number, not {type(data['id']).__name__}"
    if "method" in data and not isinstance(data["method"], str):
        return f"the method must be a string, not {type(data['method']).__name__}"
    return None


class WireProtocol(LanguageServerProtocol):
    _initialize_seen = False

    def send_raw(self, payload: Mapping[str, object]) -> None:
        if self.writer is None:
            return
        body = json.dumps(payload).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))

    def structure_message(self, data: dict[str, object]) -> object:
        if "jsonrpc" in data and (shape := _bad_shape(data)) is not None:
            # An id or method of the wrong type: an invalid request, answered with the id when
            # it is one (else null), never pygls's internal error and its traceback.
            given = data.get("id")
            msg_id = given if _valid_id(given) else None
            log.warning("invalid JSON-RPC request: %s", shape)
            self.send_raw(error_response(msg_id, INVALID_REQUEST, shape))
            return _Answered()
        # `params` may be omitted (JSON-RPC 2.0, 4.2); pygls' generic request needs the key.
        omitted = "jsonrpc" in data and "method" in data and "params" not in data
        if omitted and self.get_message_type(str(data["method"])) is None:
            data = {**data, "params": None}
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "jsonrpc" in data and "id" in data and "method" in data:
                message = f"{data['method']}: params do not fit the method ({exc.message})"
                log.warning("%s", message)
                given = data["id"]
                answered = given if _valid_id(given) else None  # a bad id: answered above
                self.send_raw(error_response(answered, INVALID_PARAMS, message))
                return _Answered()
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Answered):
            return
        if isinstance(message, list):  # a batch: LSP has none; answer every request in it
            log.warning("a JSON-RPC batch of %d messages was refused", len(message))
            text = "batches are not supported: send each message on its own"
            ids = [getattr(m, "id", None) for m in message if hasattr(m, "method")]
            ids = [i for i in ids if i is not None]
            for msg_id in ids or [None]:
                self.send_raw(error_response(msg_id, INVALID_REQUEST, text))
            return
        if not hasattr(message, "jsonrpc"):  # a JSON value that is no message at all
            log.warning("not a JSON-RPC message: %.80r", message)
            msg_id = message.get("id") if isinstance(message, dict) else None
            self.send_raw(
                error_response(msg_id, INVALID_REQUEST, "not a JSON-RPC 2.0 message object")
            )
            return
        method = getattr(message, "method", None)
        if method == "initialize":
            self._initialize_seen = True
        elif not self._initialize_seen and method not in _BEFORE_INITIALIZE:
            msg_id = getattr(message, "id", None)
            if msg_id is not None:  # a notification before initialize is dropped (LSP)
                text = f"{method}: the server is not initialized (send initialize first)"
                self.send_raw(error_response(msg_id, NOT_INITIALIZED, text))
            return
        super().handle_message(message)

    def parse_error(self, error: json.JSONDecodeError | UnicodeDecodeError) -> None:
        if isinstance(error, UnicodeDecodeError):
            text = f"the message body is not valid UTF-8 ({error.reason} at byte {error.start})"
        else:
            text = f"invalid JSON: {error}"
        log.warning("invalid message from the editor: %s", text)
        self.send_raw(error_response(None, PARSE_ERROR, text))

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: ResponseError | None = None
    ) -> None:
        # Every error answered carries `data.kind`, pygls's own (an unknown method) included.
        super()._send_response(msg_id, result, with_kind(error) if error is not None else None)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        if future.cancelled() or not isinstance(future.exception(), JsonRpcException):
            super()._send_handler_result(future, msg_id=msg_id)
            return
        # An error the bridge or the daemon meant (not_found, not_idle, bad params): one line.
        self._request_futures.pop(msg_id, None)
        exc = future.exception()
        assert isinstance(exc, JsonRpcException)
        error = with_kind(exc.to_response_error())
        kind = error.data["kind"] if isinstance(error.data, dict) else "error"
        log.warning("request %s failed: %s (%s)", msg_id, error.message, kind)
        self._send_response(msg_id, error=error)


class _DropParseTraceback(logging.Filter):
    """pygls logs invalid JSON with a traceback; the bridge logs it once, as one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, json.JSONDecodeError | UnicodeDecodeError)


def quiet_pygls() -> None:
    logging.getLogger("pygls.server").addFilter(_DropParseTraceback())

"""The JSON-RPC edges pygls leaves unanswered: a request without `params`, a message that does not
fit its method's shape, invalid JSON, batches; and every error the bridge answers carries
`data.kind` (docs/editors.md, "Errors"). Daemon errors are logged as one line, not a traceback."""

from __future__ import annotations

import json
import logging
from concurrent.futures import Future
from typing import Any

from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

# `data.kind` for JSON-RPC's own error codes, when the error has none.
KINDS = {
    PARSE_ERROR: "parse_error",
    INVALID_REQUEST: "invalid_request",
    -32601: "method_not_found",
    INVALID_PARAMS: "invalid_params",
    -32603: "internal",
    -32800: "cancelled",
}


class _Answered:
    """A message already answered with an error while it was read: nothing more to do."""


def with_kind(error: ResponseError) -> ResponseError:
    data = error.data if isinstance(error.data, dict) else {}
    if "kind" not in data:
        kind = KINDS.get(error.code, "error")
        error = ResponseError(code=error.code, message=error.message, data={**data, "kind": kind})
    return error


def error_response(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "error": {"code": code, "message": message, "data": {"kind": KINDS[code]}},
    }


class WireProtocol(LanguageServerProtocol):
    def send_raw(self, payload: dict[str, Any]) -> None:
        if self.writer is None:
            return
        body = json.dumps(payload).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))

    def structure_message(self, data: dict[str, Any]) -> Any:
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
                self.send_raw(error_response(data["id"], INVALID_PARAMS, message))
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
        super().handle_message(message)

    def parse_error(self, error: json.JSONDecodeError) -> None:
        log.warning("invalid JSON from the editor: %s", error)
        self.send_raw(error_response(None, PARSE_ERROR, f"invalid JSON: {error}"))

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
        return not isinstance(exc, json.JSONDecodeError)


def quiet_pygls() -> None:
    logging.getLogger("pygls.server").addFilter(_DropParseTraceback())

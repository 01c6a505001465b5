"""Pure protocol edges: what a frame the server cannot use is answered with, and which cursors
the index accepts. No event loop, no daemon."""

from __future__ import annotations

import base64

import orjson
import pytest

from openvaala_server import errors
from openvaala_server.protocol import jsonrpc
from openvaala_server.store import index as ix


@pytest.mark.parametrize("msg_id", [7, "seven"])
def test_a_lone_surrogate_keeps_the_id(msg_id: object) -> None:
    params = '"params":{"t":"\\udc00"}'
    frame = (
        '{"jsonrpc":"2.0","id":' + orjson.dumps(msg_id).decode() + ',"method":"m",' + params + "}"
    )
    parsed = jsonrpc.parse(frame)
    assert isinstance(parsed, jsonrpc.Invalid)
    assert parsed.id == msg_id
    assert isinstance(parsed.error, errors.ParseError)
    assert "surrogate" in str(parsed.error)


@pytest.mark.parametrize(
    "frame",
    ['{"jsonrpc":"2.0","id":1,"x":NaN}', '{"id":1', '["\\ud800"]', '{"id":true,"x":"\\ud800"}'],
)
def test_other_unusable_frames_have_no_id(frame: str) -> None:
    parsed = jsonrpc.parse(frame)
    assert isinstance(parsed, jsonrpc.Invalid) and parsed.id is None


def test_only_cursors_the_index_gave_out_decode() -> None:
    cursor = ix.encode_cursor("2026-12-03T00:00:00Z", "a" * 32)
    assert ix.decode_cursor(cursor) == ("2026-12-03T00:00:00Z", "a" * 32)
    forged = base64.urlsafe_b64encode(orjson.dumps(["2026-12-03T00:00:00Z", "a" * 32])).decode()
    for bad in (
        forged,
        cursor[:-2],
        "",
        "garbage",
        ("B" if cursor[0] == "A" else "A") + cursor[1:],
    ):
        with pytest.raises(ValueError):
            ix.decode_cursor(bad)

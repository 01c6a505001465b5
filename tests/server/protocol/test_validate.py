"""The edge's check of request params (protocol/validate.py), without a daemon: every method's
TypedDict can be checked, and each kind of mistake is named the way docs/protocol.md says."""

from __future__ import annotations

import pytest

from openvaala_server.errors import InvalidParams
from openvaala_server.protocol import file_payloads as fp
from openvaala_server.protocol import payloads as p
from openvaala_server.protocol.json_types import JsonValue
from openvaala_server.protocol.validate import check

CID = "a" * 32


@pytest.mark.parametrize("method", sorted(p.REQUEST_PARAMS))
def test_every_method_s_params_can_be_checked(method: str) -> None:
    try:
        check(p.REQUEST_PARAMS[method], {})
    except InvalidParams as exc:
        assert exc.message.endswith("is required")


@pytest.mark.parametrize(
    ("shape", "raw", "param", "message"),
    [
        (p.CreateParams, {}, "cwd", '"cwd" is required'),
        (p.CreateParams, {"cwd": None}, "cwd", '"cwd" is required'),  # null counts as absent
        (p.CreateParams, {"cwd": 5}, "cwd", '"cwd" must be a string'),
        (p.ListParams, {"limit": 1.5}, "limit", '"limit" must be a whole number'),
        (p.ListParams, {"limit": True}, "limit", '"limit" must be a whole number'),
        (p.ListParams, {"archived": 0}, "archived", '"archived" must be true or false'),
        (p.InitializeParams, {"clientInfo": []}, "clientInfo", '"clientInfo" must be an object'),
        (
            p.RespondParams,
            {"conversationId": CID, "approvalId": CID, "decision": "maybe"},
            "decision",
            '"decision" must be one of allow, allow_conversation, deny',
        ),
        (
            p.GetPromptParams,
            {"server": "s", "name": "n", "arguments": {"topic": 1}},
            "arguments",
            '"arguments[...]" must be a string',  # a value of the map,
        ),
    ],
)
def test_a_mistake_is_named_with_its_param(
    shape: type, raw: dict[str, object], param: str, message: str
) -> None:
    with pytest.raises(InvalidParams) as refused:
        check(shape, raw)  # type: ignore[arg-type]
    assert (refused.value.message, refused.value.data["param"]) == (message, param)


def test_what_is_right_passes_free_json_and_unknown_keys_included() -> None:
    check(p.CreateParams, {"cwd": "/w", "title": None, "fromANewerClient": [1]})
    servers: dict[str, JsonValue] = {
        "docs": {"command": "x", "args": ["-v"], "env": {"A": "1"}, "timeout": 1.5}
    }
    check(fp.SetMcpServersParams, {"conversationId": CID, "servers": servers})
    check(fp.FilesRespondParams, {"requestId": CID, "text": None, "exitCode": None})

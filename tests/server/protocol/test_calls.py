"""The typed seam (protocol/calls.py) is the method table's: every request typed by its params
and result, every notification by its params, and the committed module what the generator
writes from payloads.py today (docs/design.md, "Typed seams")."""

from __future__ import annotations

import ast
import typing
from typing import get_args, get_type_hints

from openvaala_server.protocol import calls, file_payloads, gen_calls, payloads


def test_the_committed_module_is_what_the_tables_generate() -> None:
    assert gen_calls.TARGET.read_text() == gen_calls.render(), (
        "openvaala_server/protocol/calls.py is stale: run"
        " `python -m openvaala_server.protocol.gen_calls`"
    )


def _hints(cls: object) -> dict[str, object]:
    return get_type_hints(cls, vars(calls))


def _overloads() -> dict[str, tuple[str, str]]:
    """`Request.__call__`'s overloads, read from the source: method -> (params, result)."""
    [request] = [
        node
        for node in ast.parse(gen_calls.TARGET.read_text()).body
        if isinstance(node, ast.ClassDef) and node.name == "Request"
    ]
    typed = {}
    for function in request.body:
        if not isinstance(function, ast.AsyncFunctionDef):
            continue
        method, params = function.args.posonlyargs[1:] or function.args.args[1:3]
        annotation = ast.unparse(method.annotation or ast.Constant(None))
        if annotation.startswith("Literal["):
            name = ast.literal_eval(annotation.removeprefix("Literal[").removesuffix("]"))
            returns = ast.unparse(function.returns or ast.Constant(None))
            typed[name] = (ast.unparse(params.annotation or ast.Constant(None)), returns)
    return typed


def _named(shape: type) -> str:
    """How calls.py names a payload type: payloads' own as `p.`, file_payloads' as `fp.`."""
    if getattr(payloads, shape.__name__, None) is shape:
        return f"p.{shape.__name__}"
    assert getattr(file_payloads, shape.__name__) is shape
    return f"fp.{shape.__name__}"


def test_every_request_is_typed_by_its_params_and_result() -> None:
    assert _overloads() == {
        method: (_named(params), _named(payloads.REQUEST_RESULTS[method]))
        for method, params in payloads.REQUEST_PARAMS.items()
    }


def test_every_notification_is_one_member_of_the_union_with_its_params() -> None:
    members: dict[str, type] = {}
    for event in get_args(calls.Notification):
        hints = _hints(event)
        [name] = get_args(hints["method"])
        members[name] = typing.cast(type, hints["params"])
    assert set(members) == set(payloads.NOTIFICATION_PARAMS)
    for method, declared in payloads.NOTIFICATION_PARAMS.items():
        params = members[method]
        # A conversation's carry the hub's stamp besides the declared params; the daemon's not.
        daemon = method in gen_calls.DAEMON_NOTIFICATIONS
        expected = set(declared.__annotations__) | (set() if daemon else {"conversationId", "seq"})
        assert set(get_type_hints(params, vars(calls))) == expected, method

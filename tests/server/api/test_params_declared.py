"""The handlers' getters (protocol/params.py) trust the edge's check (protocol/validate.py) for
types, so every param a handler reads must be declared in its method's TypedDict with the type
the getter returns, and read with a default exactly when it is optional. Read from the handlers'
source: `p.string("cwd", None)` in the function a method's table names."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

from openvaala_server.protocol import methods
from openvaala_server.protocol import payloads as w

API = Path(methods.__file__).parents[1] / "api"
TYPES = {"string": str, "boolean": bool, "integer": int, "id": str}


def _reads(function: ast.AsyncFunctionDef) -> list[tuple[str, str, bool]]:
    """(getter, key, read with a default) for each `p.getter("key", ...)` in `function`."""
    out = []
    for call in ast.walk(function):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == "p"
            and call.args
            and isinstance(call.args[0], ast.Constant)
        ):
            getter = call.func.attr
            given = len(call.args) >= (3 if getter == "choice" else 2)
            out.append((getter, str(call.args[0].value), given or getter in ("value", "obj")))
    return out


def _handlers() -> dict[str, list[tuple[str, str, bool]]]:
    """Each method's reads, from the tables (`m.X: self.handler` / `m.X: handler`)."""
    functions: dict[str, list[tuple[str, str, bool]]] = {}
    tables: dict[str, str] = {}
    for source in sorted(API.glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.AsyncFunctionDef):
                functions[f"{source.stem}.{node.name}"] = _reads(node)
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Attribute) and isinstance(key.value, ast.Name):
                        name = value.attr if isinstance(value, ast.Attribute) else value.id  # type: ignore[attr-defined]
                        tables[getattr(methods, key.attr)] = f"{source.stem}.{name}"
    return {method: functions[function] for method, function in tables.items()}


def test_every_param_a_handler_reads_is_declared_with_its_type() -> None:
    handlers = _handlers()
    assert set(handlers) == set(w.REQUEST_PARAMS)
    wrong = []
    for method, reads in handlers.items():
        shape = w.REQUEST_PARAMS[method]
        hints = typing.get_type_hints(shape)
        extras = typing.get_type_hints(shape, include_extras=True)
        # A param read with a default anywhere is optional (`text` is, when images are sent).
        defaulted = {key for getter, key, optional in reads if optional}
        for getter, key, _ in reads:
            optional = key in defaulted
            if key not in hints:
                wrong.append(f"{method}: {key} is not in {shape.__name__}")
                continue
            declared_optional = typing.get_origin(extras[key]) is typing.NotRequired or (
                not getattr(shape, "__total__", True) and key not in _required(shape)
            )
            # `obj` and `value` read None for an absent param whether it is required or not.
            if optional != declared_optional and getter not in ("obj", "value"):
                wrong.append(f"{method}: {key} read with default={optional}, declared otherwise")
            hint = hints[key]
            if getter in TYPES and hint is not TYPES[getter]:
                wrong.append(f"{method}: {key} read as {getter}, declared {hint}")
            if getter == "choice" and typing.get_origin(hint) is not typing.Literal:
                wrong.append(f"{method}: {key} read as a choice, declared {hint}")
    assert wrong == [], "\n".join(wrong)


def _required(shape: type) -> set[str]:
    extras = typing.get_type_hints(shape, include_extras=True)
    return {k for k, h in extras.items() if typing.get_origin(h) is typing.Required}

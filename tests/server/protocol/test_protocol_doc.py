"""docs/protocol.md against the protocol's types (protocol/methods.py, protocol/payloads.py).

Every method and notification in the types is in the doc's tables, and every one in the tables
is in the types; each documented `{field, optional?}` set equals its TypedDict's keys, with the
same optional ones. Pure: the doc is read as text, no daemon.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import NotRequired, Required, cast

import pytest

from openvaala_server.api.handlers import Dispatcher
from openvaala_server.domain import records as r
from openvaala_server.protocol import methods as m
from openvaala_server.protocol import payloads as p

if typing.TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager

DOC = Path(__file__).resolve().parents[3] / "docs" / "protocol.md"
_ROW = re.compile(r"^\|\s*`([a-zA-Z]+/[a-zA-Z]+|initialize)`\s*\|(.*)$")
_KIND_ROW = re.compile(r"^\|\s*`([a-z_]+)`\s*\|(.*)$")
_CODE = re.compile(r"`([^`]*)`")


def _section(doc: str, heading: str) -> str:
    """The text under `heading` up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    start = doc.index("\n" + heading + "\n")
    rest = doc[start + len(heading) + 2 :]
    ends = [
        mt.start() for mt in re.finditer(r"^(#+) ", rest, re.M) if len(mt.group(1)) <= len(level)
    ]
    return rest[: ends[0]] if ends else rest


def _table(text: str, row: re.Pattern[str] = _ROW) -> dict[str, list[str]]:
    """`method` → its other cells, for each row of the tables in `text` led by a method name."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = row.match(line)
        if match:
            cells = re.split(r"(?<!\\)\|", match.group(2))  # `\|` is a pipe inside a cell
            rows[match.group(1)] = [c.strip() for c in cells][:-1]
    return rows


def documented(doc: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The requests of "Requests / Summary" and the notifications of the notification tables."""
    requests = _table(_section(doc, "### Summary"))
    notifications = _table(_section(doc, "## Notifications"))
    return requests, notifications


def _top_fields(shape: str) -> dict[str, bool]:
    """`{a, b?, c: {x}}` → {"a": required, "b": optional, "c": required} (top level only)."""
    fields: dict[str, bool] = {}
    depth, part = 0, ""
    for ch in shape.strip()[1:-1] + ",":
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            name = part.split(":", 1)[0].strip()
            if name:
                fields[name.rstrip("?")] = not name.endswith("?")
            part = ""
        else:
            part += ch
    return fields


def doc_fields(cell: str) -> dict[str, bool] | str | None:
    """The fields a table cell documents (name → required). A cell with several `{…}` forms
    ("`{a, b}` or `{a, c}`") makes a field optional unless every form has it. A cell that is a
    shape's name (`Usage`) gives that name; a cell with neither, None."""
    spans = _CODE.findall(cell)
    shapes = [s for s in spans if s.startswith("{")]
    if not shapes:
        return spans[0] if spans else None
    forms = [_top_fields(s) for s in shapes]
    names = {n for f in forms for n in f}
    return {n: all(f.get(n, False) for f in forms) for n in names}


def type_fields(td: type) -> dict[str, bool]:
    """A TypedDict's keys → required. Read from the evaluated hints: with postponed annotations
    `__required_keys__` does not see `NotRequired[...]` on Python 3.11."""
    hints = typing.get_type_hints(td, include_extras=True)
    out = {}
    for name, hint in hints.items():
        origin = typing.get_origin(hint)
        if origin is NotRequired:
            out[name] = False
        elif origin is Required:
            out[name] = True
        else:
            out[name] = name in td.__required_keys__  # type: ignore[attr-defined]
    return out


def check(doc: str) -> list[str]:
    """What differs between `doc` and the types, one sentence each (empty: they agree)."""
    problems: list[str] = []
    requests, notifications = documented(doc)
    pairs = [
        ("request", requests, m.REQUESTS, p.REQUEST_PARAMS, p.REQUEST_RESULTS),
        ("notification", notifications, m.NOTIFICATIONS, p.NOTIFICATION_PARAMS, {}),
    ]
    listed = _initialize_methods(doc)
    if listed != sorted(m.REQUESTS):
        missing = sorted(m.REQUESTS - set(listed))
        extra = sorted(set(listed) - m.REQUESTS)
        problems.append(
            f"the initialize example's methods differ: missing {missing}, unknown {extra}"
            + ("" if missing or extra else ", or not sorted")
        )
    for kind, rows, names, params, results in pairs:
        for name in sorted(names - set(rows)):
            problems.append(f"{kind} {name} is in protocol/methods.py but not documented")
        for name in sorted(set(rows) - names):
            problems.append(f"{kind} {name} is documented but not in protocol/methods.py")
        for name in sorted(set(rows) & names):
            cells = rows[name]
            problems += _compare(f"{kind} {name} params", cells[0], params.get(name))
            if name in results:
                problems += _compare(f"request {name} result", cells[1], results[name])
    return problems


def _initialize_methods(doc: str) -> list[str]:
    """The `capabilities.methods` of the doc's initialize example, in its order."""
    example = _section(doc, "## The initialize handshake")
    start = example.index('"methods":[')
    return re.findall(r'"([^"]+)"', example[start + len('"methods":[') : example.index("]", start)])


def _compare(what: str, cell: str, td: type | None) -> list[str]:
    if td is None:
        return [f"{what}: no TypedDict in protocol/payloads.py"]
    shown = doc_fields(cell)
    if shown is None:
        return [f"{what}: the doc shows no `{{...}}` or shape name ({cell!r})"]
    if isinstance(shown, str):
        same = shown == td.__name__
        return [] if same else [f"{what}: the doc names {shown}, the type is {td.__name__}"]
    declared = type_fields(td)
    out = []
    for name in sorted(declared.keys() - shown.keys()):
        out.append(f"{what}: {name} is in {td.__name__} but not in the doc")
    for name in sorted(shown.keys() - declared.keys()):
        out.append(f"{what}: {name} is in the doc but not in {td.__name__}")
    for name in sorted(shown.keys() & declared.keys()):
        if shown[name] != declared[name]:
            doc_says = "required" if shown[name] else "optional"
            out.append(f"{what}: {name} is {doc_says} in the doc, not in {td.__name__}")
    return out


def test_the_doc_and_the_types_agree() -> None:
    problems = check(DOC.read_text(encoding="utf-8"))
    assert not problems, "docs/protocol.md and protocol/ differ:\n" + "\n".join(problems)


def test_every_request_has_a_handler_and_a_params_type() -> None:
    handled = set(Dispatcher(cast("ConversationManager", None)).methods)
    assert handled == m.REQUESTS, (handled ^ m.REQUESTS, "handlers vs protocol/methods.py")
    assert set(p.REQUEST_PARAMS) == m.REQUESTS
    assert set(p.NOTIFICATION_PARAMS) == m.NOTIFICATIONS
    assert not m.REQUESTS & m.NOTIFICATIONS


def test_a_missing_row_is_named() -> None:
    doc = DOC.read_text(encoding="utf-8")
    lacking = "\n".join(line for line in doc.splitlines() if not line.startswith("| `turn/resume`"))
    assert check(lacking) == ["request turn/resume is in protocol/methods.py but not documented"]
    lacking = "\n".join(
        line for line in doc.splitlines() if not line.startswith("| `pins/updated`")
    )
    assert check(lacking) == [
        "notification pins/updated is in protocol/methods.py but not documented"
    ]


def test_a_method_missing_from_the_initialize_example_is_named() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert '"turn/resume"' in doc
    assert check(doc.replace('"turn/resume"', '"turn/rsume"', 1)) == [
        "the initialize example's methods differ: missing ['turn/resume'], unknown ['turn/rsume']"
    ]


def test_an_undeclared_method_or_field_is_named() -> None:
    doc = DOC.read_text(encoding="utf-8")
    row = "| `item/delta` | `{sessionId, itemId, field, delta}` |"
    assert row in doc
    extra = doc.replace(row, "| `item/undone` | `{sessionId}` | x |\n" + row)
    assert check(extra) == ["notification item/undone is documented but not in protocol/methods.py"]
    renamed = doc.replace(row, "| `item/delta` | `{sessionId, itemId, field, chunk}` |")
    assert check(renamed) == [
        "notification item/delta params: delta is in ItemDeltaNote but not in the doc",
        "notification item/delta params: chunk is in the doc but not in ItemDeltaNote",
    ]
    optional = doc.replace(row, "| `item/delta` | `{sessionId, itemId, field, delta?}` |")
    assert check(optional) == [
        "notification item/delta params: delta is optional in the doc, not in ItemDeltaNote"
    ]


@pytest.mark.parametrize("kind", sorted(r.ITEM_KINDS))
def test_every_item_kind_is_documented_with_its_fields(kind: str) -> None:
    doc = DOC.read_text(encoding="utf-8")
    rows = _table(_section(doc, "### Item"), _KIND_ROW)
    assert kind in rows, f"item type {kind} is in domain/records.py but not in docs/protocol.md"
    common = {"itemId", "type", "sessionId", "turnId", "createdAt", "status"}
    extra = {"fromConversationId", "copiedFrom"}
    cell = rows[kind][0]
    declared = set(type_fields(r.ITEM_KINDS[kind])) - common - extra
    shown = {
        name.rstrip("?") for name in _CODE.findall(cell) if re.fullmatch(r"[a-zA-Z]+\??", name)
    }
    assert declared <= shown, f"{kind}: {sorted(declared - shown)} not in the doc's Item table"
    assert set(type_fields(r.Item)) >= declared | common | extra

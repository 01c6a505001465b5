"""A tool schema's usage estimate is made once per schema (domain/usage.py, `estimate_tool`):
the estimates of hundreds of sessions count the same tools again (docs/design.md, "Subagent
sessions paged on demand"). An equal schema made anew is not written out again; a changed one
is estimated anew."""

from __future__ import annotations

import json
from typing import Any

import pytest

from openvaala_server.domain import usage
from openvaala_server.models.base import ToolSpec
from openvaala_server.protocol.json_types import JsonObject


def test_an_equal_schema_is_not_written_out_again_and_a_changed_one_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    written: list[object] = []
    real = json.dumps

    def dumps(value: object, **kwargs: Any) -> str:
        written.append(value)
        return real(value, **kwargs)

    monkeypatch.setattr(json, "dumps", dumps)  # what domain/usage.py writes schemas with
    schema: JsonObject = {"type": "object", "properties": {"agent": {"enum": ["a", "b"]}}}
    first = usage.estimate_tool(ToolSpec("spawn_test", "Spawns.", schema))
    again = usage.estimate_tool(ToolSpec("spawn_test", "Spawns.", json.loads(real(schema))))
    assert again == first and len(written) == 1
    longer: JsonObject = {
        "type": "object",
        "properties": {"agent": {"enum": ["a", "b", "c" * 400]}},
    }
    changed = usage.estimate_tool(ToolSpec("spawn_test", "Spawns.", longer))
    assert changed > first + 100 and len(written) == 2  # 400 characters more

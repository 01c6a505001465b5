"""`thread/list`'s filter rules on their own (codex/listing.py): which source kinds a thread
answers to, and the parameters read (the end-to-end tests are in test_thread_list.py)."""

from __future__ import annotations

from typing import Any

import pytest

from openvaala_server import errors
from openvaala_server.codex import listing


def _thread(source: Any, cwd: str = "/w", tid: str = "0" * 32) -> Any:
    return {"id": tid, "source": source, "cwd": cwd, "modelProvider": "openvaala"}


def test_source_kinds_of_each_source() -> None:
    assert listing.source_kinds("vscode") == {"vscode"}
    spawned = {"subAgent": {"thread_spawn": {"parent_thread_id": "x", "depth": 1}}}
    assert listing.source_kinds(spawned) == {"subAgent", "subAgentThreadSpawn"}  # type: ignore[arg-type]
    assert listing.source_kinds({"subAgent": "review"}) == {"subAgent", "subAgentReview"}
    assert listing.source_kinds({"subAgent": {"other": "x"}}) == {"subAgent", "subAgentOther"}


def test_the_default_is_the_interactive_threads_and_below_a_thread_its_subagents() -> None:
    assert listing.thread_filter({}).kinds == {"cli", "vscode"}
    assert listing.thread_filter({"sourceKinds": []}).kinds == {"cli", "vscode"}
    below = listing.thread_filter({"ancestorThreadId": "0" * 32}, below=True)
    assert below.subagents and not below.conversations


def test_filters_match_exactly() -> None:
    wanted = listing.thread_filter(
        {"cwd": ["/w"], "modelProviders": ["openvaala"], "excludedThreadIds": ["1" * 32]}
    )
    assert wanted.matches(_thread("vscode"))
    assert not wanted.matches(_thread("vscode", cwd="/w/sub"))
    assert not wanted.matches(_thread("vscode", tid="1" * 32))
    assert not listing.thread_filter({"modelProviders": ["openai"]}).matches(_thread("vscode"))
    assert not listing.thread_filter({"includedThreadIds": []}).matches(_thread("vscode"))


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"sourceKinds": ["bogus"]}, "sourceKinds"),
        ({"cwd": {"a": 1}}, "cwd"),
        ({"originators": ["x"]}, "originators"),
        ({"includedThreadIds": ["1" * 32] * 101}, "includedThreadIds"),
    ],
)
def test_a_bad_parameter_is_named(params: dict[str, Any], param: str) -> None:
    with pytest.raises(errors.InvalidParams) as refused:
        listing.thread_filter(params)
    assert refused.value.data["param"] == param

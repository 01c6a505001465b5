"""`thread/list` filters as Codex's app-server does: `sourceKinds` (a conversation is an
interactive thread, a subagent a `subAgentThreadSpawn`), `cwd`, `modelProviders`,
`includedThreadIds`/`excludedThreadIds`, `archived`, and pages that are full whatever the
filters leave out (docs/codex.md "Listing threads")."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.codex.flows import demo_config, module_daemon, run_turn
from tests.codex.harness import CodexClient, open_client
from tests.support.daemon import Daemon


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon for the tests that list nothing of their own (bad filters)."""
    with module_daemon(tmp_path_factory, "listing", demo_config()) as daemon:
        yield daemon


@pytest.fixture
def home(daemon_factory: Callable[..., Daemon]) -> Daemon:
    """A daemon of the test's own: what it lists is exactly what it made."""
    return daemon_factory(demo_config())


@pytest.fixture
async def codex(home: Daemon) -> AsyncIterator[CodexClient]:
    client = await open_client(home, "websocket")
    try:
        yield client
    finally:
        await client.close()


async def _thread_in(codex: CodexClient, cwd: Path, text: str) -> str:
    await anyio.Path(cwd).mkdir(exist_ok=True)
    started = await codex.request("thread/start", {"cwd": str(cwd)})
    thread = str(started["thread"]["id"])
    await run_turn(codex, thread, text)  # saved (and listed) once it has a message
    return thread


@pytest.fixture
async def three(codex: CodexClient, home: Daemon) -> tuple[str, str, str]:
    """Two conversations, in directories a/ (older, with a subagent) and b/ (newer); and the
    subagent's thread."""
    older = await _thread_in(codex, home.workdir / "a", "spawn: say hi")
    [child] = (await codex.request("thread/list", {"parentThreadId": older}))["data"]
    newer = await _thread_in(codex, home.workdir / "b", "hello b")
    return older, newer, child["id"]


async def _ids(codex: CodexClient, **params: Any) -> list[str]:
    page = await codex.request("thread/list", params)
    return [t["id"] for t in page["data"]]


async def test_source_kinds_list_conversations_and_subagents_as_codex_does(
    codex: CodexClient, three: tuple[str, str, str]
) -> None:
    older, newer, child = three
    conversations = [newer, older]  # newest first
    assert await _ids(codex) == conversations  # absent: the interactive threads
    assert await _ids(codex, sourceKinds=[]) == conversations
    # The Codex TUI's /resume asks for ["cli", "vscode"], its recent list also for these two.
    assert await _ids(codex, sourceKinds=["cli", "vscode"]) == conversations
    assert await _ids(codex, sourceKinds=["exec", "appServer"]) == []
    assert await _ids(codex, sourceKinds=["subAgentThreadSpawn"]) == [child]
    assert await _ids(codex, sourceKinds=["subAgent", "vscode"]) == [newer, older, child]
    assert await _ids(codex, sourceKinds=["subAgentReview"]) == []
    # Below a thread, no sourceKinds means its subagents; a kind they are not lists none.
    assert await _ids(codex, ancestorThreadId=older) == [child]
    assert await _ids(codex, ancestorThreadId=older, sourceKinds=["subAgentThreadSpawn"]) == [child]
    assert await _ids(codex, ancestorThreadId=older, sourceKinds=["cli"]) == []


async def test_cwd_and_model_providers_filter(
    codex: CodexClient, home: Daemon, three: tuple[str, str, str]
) -> None:
    older, newer, child = three
    a, b = str(home.workdir / "a"), str(home.workdir / "b")
    assert await _ids(codex, cwd=a) == [older]
    assert await _ids(codex, cwd=[a, b]) == [newer, older]
    assert await _ids(codex, cwd=str(home.workdir / "nowhere")) == []
    assert await _ids(codex, cwd=b, sourceKinds=["subAgent"]) == []
    assert await _ids(codex, cwd=a, sourceKinds=["subAgent"]) == [child]
    assert await _ids(codex, modelProviders=["openai"]) == []
    assert await _ids(codex, modelProviders=["openvaala"]) == [newer, older]
    assert await _ids(codex, modelProviders=[]) == [newer, older]


async def test_pages_are_full_whatever_the_filters_leave_out(
    codex: CodexClient, home: Daemon, three: tuple[str, str, str]
) -> None:
    older, newer, _ = three
    first = await codex.request("thread/list", {"limit": 1})
    assert [t["id"] for t in first["data"]] == [newer] and first["nextCursor"]
    second = await codex.request("thread/list", {"limit": 1, "cursor": first["nextCursor"]})
    assert [t["id"] for t in second["data"]] == [older]
    # The newest conversation is filtered out, yet the page of one is the older one.
    only_a = await codex.request("thread/list", {"limit": 1, "cwd": str(home.workdir / "a")})
    assert [t["id"] for t in only_a["data"]] == [older]
    assert await _ids(codex, includedThreadIds=[older]) == [older]
    assert await _ids(codex, includedThreadIds=[]) == []
    assert await _ids(codex, excludedThreadIds=[newer.replace("-", "")]) == [older]


async def test_loaded_threads_include_the_followed_subagents(
    codex: CodexClient, three: tuple[str, str, str]
) -> None:
    older, newer, child = three
    loaded = (await codex.request("thread/loaded/list", {}))["data"]
    assert sorted(loaded) == sorted([older, newer, child])
    await codex.request("thread/unsubscribe", {"threadId": child})
    assert sorted((await codex.request("thread/loaded/list", {}))["data"]) == sorted([older, newer])


async def test_archived_lists_only_archived_threads(
    codex: CodexClient, home: Daemon, three: tuple[str, str, str]
) -> None:
    older, newer, _ = three
    assert await _ids(codex, archived=True) == []
    gone = await _thread_in(codex, home.workdir / "c", "archive me")
    await codex.request("thread/archive", {"threadId": gone})
    assert await _ids(codex) == [newer, older]
    assert await _ids(codex, archived=True) == [gone]
    assert await _ids(codex, archived=True, cwd=str(home.workdir / "a")) == []


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"sourceKinds": ["bogus"]}, "sourceKinds"),
        ({"sourceKinds": "cli"}, "sourceKinds"),
        ({"cwd": 5}, "cwd"),
        ({"modelProviders": [1]}, "modelProviders"),
        ({"originators": ["someone"]}, "originators"),
        ({"includedThreadIds": ["nope"]}, "includedThreadIds"),
        ({"excludedThreadIds": ["0" * 32] * 101}, "excludedThreadIds"),
        (
            {"parentThreadId": "0" * 32, "ancestorThreadId": "0" * 32},
            "ancestorThreadId",
        ),
    ],
)
async def test_a_bad_filter_is_an_error_naming_it(
    shared: Daemon, params: dict[str, Any], param: str
) -> None:
    codex = await open_client(shared, "websocket")
    try:
        answer = await codex.call("thread/list", params)
        assert answer["error"]["code"] == -32602, answer
        assert answer["error"]["data"]["param"] == param, answer
        assert (await codex.request("thread/list", {}))["data"] == []  # still serving
    finally:
        await codex.close()

"""The Codex TUI's `/approvals` choice (a `turn/start`'s `approvalPolicy` and `sandboxPolicy`) as
OpenVaala's permission mode (docs/codex.md "Per-turn overrides"): Read Only is plan mode, a policy
that asks is `ask`, "Full access" narrows nothing and gives back the mode this client narrowed;
settings the client merely still holds never undo another client's switch. Each `turn/start` is
checked against Codex's schema."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from tests.codex import schema_check
from tests.codex.flows import demo_config, module_daemon, start_thread, text_input
from tests.codex.harness import CodexClient, open_client
from tests.support.daemon import Daemon

FULL_ACCESS = {"approvalPolicy": "never", "sandboxPolicy": {"type": "dangerFullAccess"}}
READ_ONLY = {"approvalPolicy": "on-request", "sandboxPolicy": {"type": "readOnly"}}
UNTRUSTED = {"approvalPolicy": "untrusted", "sandboxPolicy": {"type": "workspaceWrite"}}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with module_daemon(tmp_path_factory, "approvals-policy", demo_config()) as d:
        yield d


@pytest.fixture
async def codex(daemon: Daemon) -> AsyncIterator[CodexClient]:
    client = await open_client(daemon, "websocket")
    try:
        yield client
    finally:
        await client.close()


async def _turn(codex: CodexClient, thread: str, policies: dict[str, Any]) -> None:
    params = {"threadId": thread, "input": text_input("hello"), **policies}
    schema_check.check_client_request({"id": 1, "method": "turn/start", "params": params})
    mark = len(codex.notes)
    turn = (await codex.request("turn/start", params))["turn"]["id"]
    await codex.wait_for("turn/completed", lambda p: p["turn"]["id"] == turn, after=mark)


async def _mode(daemon: Daemon, thread: str) -> str:
    async with await daemon.client() as client:
        read: Any = await client.request(
            "conversation/subscribe", {"conversationId": thread.replace("-", "")}
        )
    return str(read["snapshot"]["conversation"]["permissionMode"])


async def test_approvals_narrow_the_permission_mode_and_never_widen_it(
    codex: CodexClient, daemon: Daemon
) -> None:
    thread = await start_thread(codex, str(daemon.workdir))
    cid = thread.replace("-", "")
    # "Full access", which the Codex TUI sends with every turn: the agent's configuration stays.
    await _turn(codex, thread, FULL_ACCESS)
    assert await _mode(daemon, thread) == "auto-edit"

    await _turn(codex, thread, READ_ONLY)  # /approvals → Read Only
    assert await _mode(daemon, thread) == "plan"

    # Another client switches it; the Codex client still sends Read Only: no undo.
    async with await daemon.client() as other:
        await other.request(
            "conversation/setPermissionMode", {"conversationId": cid, "mode": "ask"}
        )
    await _turn(codex, thread, READ_ONLY)
    assert await _mode(daemon, thread) == "ask"

    # Back to Full access: the mode this client found, never wider than the agent allows.
    await _turn(codex, thread, FULL_ACCESS)
    assert await _mode(daemon, thread) == "auto-edit"

    await _turn(codex, thread, UNTRUSTED)  # asks before what is not trusted: every write asks
    assert await _mode(daemon, thread) == "ask"


async def test_a_new_thread_starts_in_the_default_mode_and_its_policies_keep_it(
    codex: CodexClient, daemon: Daemon
) -> None:
    """A thread starts in the mode any client's new conversation starts in, and a client that
    sends back the policies it was told, or the Codex TUI's own (`on-request`, no sandbox),
    keeps it."""
    async with await daemon.client() as other:
        created: Any = await other.request("conversation/create", {"cwd": str(daemon.workdir)})
    default = created["conversation"]["permissionMode"]
    assert default == "auto-edit"  # the agent's configuration (escalate) decides

    started = await codex.request("thread/start", {"cwd": str(daemon.workdir)})
    thread = started["thread"]["id"]
    assert await _mode(daemon, thread) == default
    told = {"approvalPolicy": started["approvalPolicy"], "sandboxPolicy": started["sandbox"]}
    await _turn(codex, thread, told)
    assert await _mode(daemon, thread) == default
    await _turn(codex, thread, {"approvalPolicy": "on-request", "sandboxPolicy": None})
    assert await _mode(daemon, thread) == default


async def test_policies_a_client_was_told_or_still_holds_undo_no_switch(
    codex: CodexClient, daemon: Daemon
) -> None:
    """Another client's switch reaches the Codex client (`thread/settings/updated`); sending
    back those policies, or after a `thread/resume` the ones it held, is no choice."""
    thread = await start_thread(codex, str(daemon.workdir))
    cid = thread.replace("-", "")

    async def switch(other: Any, mode: str) -> dict[str, Any]:
        mark = len(codex.notes)
        await other.request("conversation/setPermissionMode", {"conversationId": cid, "mode": mode})
        told = (await codex.wait_for("thread/settings/updated", after=mark))["threadSettings"]
        return {"approvalPolicy": told["approvalPolicy"], "sandboxPolicy": told["sandboxPolicy"]}

    async with await daemon.client() as other:
        await switch(other, "ask")
        await _turn(codex, thread, READ_ONLY)  # narrowed from `ask`
        assert await _mode(daemon, thread) == "plan"
        told = await switch(other, "auto-edit")
        await _turn(codex, thread, told)
        assert await _mode(daemon, thread) == "auto-edit"

        await _turn(codex, thread, READ_ONLY)
        assert await _mode(daemon, thread) == "plan"
        await switch(other, "ask")
        await codex.request("thread/resume", {"threadId": thread})
        await _turn(codex, thread, READ_ONLY)  # what it held before the resume
        assert await _mode(daemon, thread) == "ask"

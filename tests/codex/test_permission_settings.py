"""The permission mode switched by another client reaches a Codex client as the real app-server
reports a change of approval policy and sandbox: `thread/settings/updated` with the policies the
mode stands for (plan: a read-only sandbox; ask: `untrusted`; auto-edit: `on-request` and
OpenVaala's own sandbox), and `thread/resume` answers with them too (docs/codex.md "Per-turn
overrides"). Every message is checked against Codex's schema by the harness."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from openvaala_server.codex.overrides import policy_mode
from tests.codex.flows import demo_config, module_daemon, start_thread
from tests.codex.harness import open_client
from tests.support.daemon import Daemon


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with module_daemon(tmp_path_factory, "permission-settings", demo_config()) as d:
        yield d


async def test_codex_hears_the_permission_mode_another_client_switched(daemon: Daemon) -> None:
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        cid = thread.replace("-", "")
        async with await daemon.client() as other:
            seen: list[tuple[str, object]] = []
            for mode in ("plan", "ask", "auto-edit"):
                mark = len(codex.notes)
                await other.request(
                    "conversation/setPermissionMode", {"conversationId": cid, "mode": mode}
                )
                updated = await codex.wait_for("thread/settings/updated", after=mark)
                assert updated["threadId"] == thread
                settings = updated["threadSettings"]
                seen.append((settings["approvalPolicy"], settings["sandboxPolicy"]["type"]))
                # What the client would send back means the same mode.
                assert policy_mode(settings["approvalPolicy"], settings["sandboxPolicy"]) == mode
            assert seen == [
                ("on-request", "readOnly"),
                ("untrusted", "externalSandbox"),
                ("on-request", "externalSandbox"),
            ]
            await other.request(
                "conversation/setPermissionMode", {"conversationId": cid, "mode": "plan"}
            )
        # A client opening the thread now is told the mode in force.
        resumed = await codex.request("thread/resume", {"threadId": thread})
        assert resumed["approvalPolicy"] == "on-request"
        assert resumed["sandbox"]["type"] == "readOnly"
    finally:
        await codex.close()

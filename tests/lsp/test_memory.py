"""Memory and /init from an editor (docs/editors.md), through the real bridge and daemon on the
offline demo model: `openvaala.remember` keeps a note and says where, `openvaala.memory` opens the
memory file in the editor, `openvaala.init` asks the agent for AGENTS.md, and a new conversation
is given the note."""

from __future__ import annotations

from openvaala_server import prompts
from tests.lsp.harness import capabilities, command, request, start_lsp, stop_lsp
from tests.support.daemon import Daemon


async def test_remember_memory_and_init_as_commands(editor: str, daemon: Daemon) -> None:
    client, rec, init = await start_lsp(daemon, capabilities(editor))
    project = daemon.workdir / ".openvaala" / "MEMORY.md"
    user = daemon.config_path.parent / "MEMORY.md"
    try:
        provider = init.capabilities.execute_command_provider
        assert provider is not None
        assert {"openvaala.init", "openvaala.remember", "openvaala.memory"} <= set(
            provider.commands
        )
        new = await command(client, "openvaala.newConversation", str(daemon.workdir))
        cid = new["conversation"]["conversationId"]

        # Nothing remembered yet: the project's file is created empty and opened for editing.
        files = await command(client, "openvaala.memory", cid)
        assert [f["exists"] for f in files["files"]] == [False, False]
        assert [d.uri for d in client.shown_documents] == [project.as_uri()]
        assert project.read_text() == ""

        saved = await command(client, "openvaala.remember", cid, "use uv, not pip")
        assert saved["path"] == str(project) and project.read_text() == "- use uv, not pip\n"
        assert any(str(project) in m.message for m in client.messages)
        await request(
            client,
            "openvaala/remember",
            {"conversationId": cid, "scope": "user", "text": "answer briefly"},
        )
        assert user.read_text() == "- answer briefly\n"
        await request(
            client,
            "openvaala/memory/write",
            {"conversationId": cid, "scope": "project", "text": "- run make lint\n"},
        )
        assert project.read_text() == "- run make lint\n"

        before = rec.methods(cid).count("turn/ended")
        sent = await command(client, "openvaala.init", cid)
        assert sent["disposition"] == "started"
        await rec.until(lambda: rec.methods(cid).count("turn/ended") > before)
        users = [
            e["params"]["item"]
            for e in rec.events
            if e.get("method") == "item/completed"
            and e["params"]["item"].get("type") == "user_message"
        ]
        assert users[-1]["text"] == prompts.init_request()

        other = await command(client, "openvaala.newConversation", str(daemon.workdir))
        trace = await request(
            client, "openvaala/context", {"conversationId": other["conversation"]["conversationId"]}
        )
        memory = "".join(p["text"] for p in trace["parts"] if p["kind"] == "memory")
        assert "- answer briefly" in memory and "- run make lint" in memory
    finally:
        await stop_lsp(client)

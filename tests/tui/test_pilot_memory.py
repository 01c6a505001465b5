"""Memory and /init in the TUI against a real daemon on the offline demo model: `# note` and
`/remember user …` keep notes in plain files a new conversation is given, `/memory` shows them
and edits one, `/init` asks the agent to write AGENTS.md."""

from __future__ import annotations

from typing import Any

from textual.widgets import TextArea

from openvaala_server import prompts
from openvaala_tui.app import VaalaApp
from openvaala_tui.memory_actions import MemoryEditor
from openvaala_tui.widgets.items import AgentMessage, UserMessage
from tests.tui.conftest import Clients, demo_config, notices, ready, type_and_send, wait_for


async def test_hash_remember_memory_and_init(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    client = await clients(daemon)
    project = daemon.workdir / ".openvaala" / "MEMORY.md"
    user = daemon.config_path.parent / "MEMORY.md"
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(110, 44)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "# use uv, not pip")
        await wait_for(pilot, lambda: project.exists(), what="the project's memory file")
        assert project.read_text() == "- use uv, not pip\n"
        assert not app.transcript.query(UserMessage)  # a note, not a message to the model

        await type_and_send(pilot, "/remember user answer briefly")
        await wait_for(pilot, lambda: user.exists(), what="the user's memory file")
        assert user.read_text() == "- answer briefly\n"

        await type_and_send(pilot, "/memory")
        heading = f"Memory (project): {project}"
        await wait_for(pilot, lambda: any(heading in t for t in notices(app)), what="/memory")
        shown = next(t for t in notices(app) if heading in t)
        assert "- use uv, not pip" in shown and str(user) in shown and "- answer briefly" in shown

        await type_and_send(pilot, "/memory edit")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoryEditor), what="the editor")
        app.screen.query_one(TextArea).text = "- use uv\n- run make lint\n"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "make lint" in project.read_text(), what="the save")
        assert project.read_text() == "- use uv\n- run make lint\n"

        await type_and_send(pilot, "/init")
        await wait_for(
            pilot,
            lambda: any(
                w.item.get("text") == prompts.init_request()
                for w in app.transcript.query(UserMessage)
            ),
            what="the /init request",
        )
        await wait_for(pilot, lambda: bool(app.transcript.query(AgentMessage)), what="reply")

    # A new conversation is given both notes.
    created = await client.request("conversation/create", {"cwd": str(daemon.workdir)})
    cid = created["conversation"]["conversationId"]
    trace = await client.request("conversation/context", {"conversationId": cid})
    memory = "".join(p["text"] for p in trace["parts"] if p["kind"] == "memory")
    assert "- answer briefly" in memory and "- run make lint" in memory

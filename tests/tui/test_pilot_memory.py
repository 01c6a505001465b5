"""Memory and /init in the TUI: `# note` and `/remember user …` keep notes, `/memory` shows them
and edits one, `/init` asks the agent to write AGENTS.md. On a fake client keeping the two
memory files as the daemon does (tests/tui/fake_client.py); the files on disk, what a new
conversation is given and /init's request to the model: tests/e2e/test_memory_e2e.py."""

from __future__ import annotations

from textual.widgets import TextArea

from openvaala_server.domain.ids import new_id
from openvaala_server.domain.memory import Scope as MemoryScope
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.protocol.payloads import MemoryFile, MemoryResult, SendResult
from openvaala_tui.app import VaalaApp
from openvaala_tui.memory_actions import MemoryEditor
from openvaala_tui.widgets.items import AgentMessage, UserMessage
from tests.tui.conftest import notices, ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CONFIG_PATH, CWD

PATHS = {
    "project": f"{CWD}/.openvaala/MEMORY.md",
    "user": CONFIG_PATH.replace("config.toml", "MEMORY.md"),
}
INIT = "Write or improve AGENTS.md for this repository."


def remembering() -> tuple[FakeClient, dict[str, str]]:
    """A fake keeping the memory files' text by scope, as the daemon writes them."""
    fake = FakeClient()
    fake.answer_sends()
    files: dict[str, str] = {}

    def file(scope: str) -> MemoryFile:
        text = files.get(scope, "")
        kind: MemoryScope = "user" if scope == "user" else "project"
        return {"scope": kind, "path": PATHS[scope], "text": text, "exists": scope in files}

    def remember(params: JsonObject) -> MemoryFile:
        scope = str(params["scope"])
        files[scope] = files.get(scope, "") + f"- {params['text']}\n"
        return file(scope)

    def read(params: JsonObject) -> MemoryResult:
        return {"files": [file("project"), file("user")]}

    def write(params: JsonObject) -> MemoryFile:
        files[str(params["scope"])] = str(params["text"])
        return file(str(params["scope"]))

    def init(params: JsonObject) -> SendResult:
        fake.turn(str(params["conversationId"]), INIT, "Wrote AGENTS.md.")
        return {"inputId": new_id(), "disposition": "started"}

    fake.answers.update(
        {
            "memory/remember": remember,
            "memory/read": read,
            "memory/write": write,
            "conversation/init": init,
        }
    )
    return fake, files


async def test_hash_remember_memory_and_init() -> None:
    fake, files = remembering()
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(110, 44)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "# use uv, not pip")
        await wait_for(pilot, lambda: "project" in files, what="the project's note")
        assert files["project"] == "- use uv, not pip\n"
        assert not app.transcript.query(UserMessage)  # a note, not a message to the model
        assert not fake.params_of("input/send")

        await type_and_send(pilot, "/remember user answer briefly")
        await wait_for(pilot, lambda: "user" in files, what="the user's note")
        assert files["user"] == "- answer briefly\n"

        await type_and_send(pilot, "/memory")
        heading = f"Memory (project): {PATHS['project']}"
        await wait_for(pilot, lambda: any(heading in t for t in notices(app)), what="/memory")
        shown = next(t for t in notices(app) if heading in t)
        assert "- use uv, not pip" in shown and PATHS["user"] in shown
        assert "- answer briefly" in shown

        await type_and_send(pilot, "/memory edit")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoryEditor), what="the editor")
        app.screen.query_one(TextArea).text = "- use uv\n- run make lint\n"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "make lint" in files["project"], what="the save")
        assert fake.params_of("memory/write") == [
            {
                "conversationId": app.view.conversation_id,
                "scope": "project",
                "text": "- use uv\n- run make lint\n",
            }
        ]

        await type_and_send(pilot, "/init")
        await wait_for(
            pilot,
            lambda: any(w.item.get("text") == INIT for w in app.transcript.query(UserMessage)),
            what="the /init request",
        )
        await wait_for(pilot, lambda: bool(app.transcript.query(AgentMessage)), what="reply")
        assert len(fake.params_of("conversation/init")) == 1

"""`/status` says where the conversation stands (`/exit`, `/quit`: test_commands_fake_client.py),
from what the daemon answers: a fake client (tests/tui/fake_client.py) holding an agent that
asks before every call in a read-only sandbox, the conversation in `ask` mode."""

from __future__ import annotations

from openvaala_tui.app import VaalaApp
from tests.tui.conftest import notices, ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import ADDRESS, CONFIG_PATH, agent


async def test_status_names_model_agent_sandbox_and_daemon() -> None:
    fake = FakeClient(agents=(agent(sandbox="read-only", network=False, approval="always"),))
    app = VaalaApp(cwd="/srv/work/project", client=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        # The widest mode an "always" agent allows, as the daemon says (tests/e2e/).
        fake.update(app.view.conversation_id, permissionMode="ask", permissionModes=["plan", "ask"])
        await wait_for(pilot, lambda: app.view.conversation.get("permissionMode") == "ask")
        await type_and_send(pilot, "/status")
        await wait_for(pilot, lambda: any("Status:" in n for n in notices(app)), what="/status")
        text = next(n for n in notices(app) if "Status:" in n)
        lines = {line.split(None, 1)[0]: line.split(None, 1)[1] for line in text.splitlines()[1:]}
        assert lines["model"] == "demo"
        assert lines["agent"] == "default"
        assert lines["sandbox"] == "read-only (network off)"
        assert lines["approval"] == "always"
        assert lines["mode"].startswith("ask ")
        assert lines["directory"] == "/srv/work/project"
        assert lines["daemon"] == ADDRESS
        assert lines["config"] == CONFIG_PATH
        assert "of 100k" in lines["context"]

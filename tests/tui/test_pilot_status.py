"""`/status` says where the conversation stands (`/exit`, `/quit`: test_commands_fake_client.py)."""

from __future__ import annotations

from typing import Any

from openvaala_tui.app import VaalaApp
from tests.tui.conftest import Clients, notices, ready, type_and_send, wait_for

PLAN_AGENT = """
[models.demo]
provider = "demo"
context_window = 100000
max_output_tokens = 8000

[agents.default]
description = "General assistant"
model = "demo"
sandbox = "read-only"
approval = "always"
"""


async def test_status_names_model_agent_sandbox_and_daemon(
    daemon_factory: Any, clients: Clients
) -> None:
    daemon = daemon_factory(PLAN_AGENT)
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/status")
        await wait_for(pilot, lambda: any("Status:" in n for n in notices(app)), what="/status")
        text = next(n for n in notices(app) if "Status:" in n)
        lines = {line.split(None, 1)[0]: line.split(None, 1)[1] for line in text.splitlines()[1:]}
        assert lines["model"] == "demo"
        assert lines["agent"] == "default"
        assert lines["sandbox"] == "read-only (network off)"
        assert lines["approval"] == "always"
        assert lines["mode"].startswith("ask ")  # the widest mode an "always" agent allows
        assert lines["directory"] == str(daemon.workdir)
        assert lines["daemon"] == daemon.address
        assert lines["config"] == str(daemon.config_path)
        assert "of 100k" in lines["context"]

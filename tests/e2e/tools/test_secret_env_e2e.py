"""Secrets named by settings never reach a tool's process: an MCP server's `bearer_token_env`.

The daemon has the token in its environment (it sends it to the MCP server); a shell command,
sandboxed or not, sees the variable unset.
"""

from __future__ import annotations

import shutil

import pytest

from tests.server.tools.sandbox_places import Places
from tests.support.daemon import Daemon
from tests.support.events import completed_items, new_conversation, run_turn

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

TOKEN = "mcp-bearer-token-never-for-tools"


async def test_an_mcp_bearer_token_is_not_in_a_commands_environment(
    places: Places, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEB_MCP_TOKEN", TOKEN)
    places.config.write_text(
        '[models.demo]\nprovider = "demo"\npace_ms = 0\n\n'
        '[mcp_servers.web]\nurl = "http://127.0.0.1:9/mcp"\nbearer_token_env = "WEB_MCP_TOKEN"\n'
        + "".join(
            f'\n[agents.{mode}]\nmodel = "demo"\nsandbox = "{mode}"\napproval = "never"\n'
            for mode in ("workspace", "off")
        )
    )
    daemon = Daemon(home=places.data, config_path=places.config, workdir=places.work)
    daemon.start()
    outputs = []
    try:
        client = await daemon.client()
        for agent in ("workspace", "off"):
            cid = await new_conversation(client, str(places.work), agent=agent)
            notes = await run_turn(client, cid, 'run: echo "token=[$WEB_MCP_TOKEN]"; env')
            [result] = completed_items(notes, "tool_result")
            outputs.append(str(result["output"]))
        await client.close()
    finally:
        daemon.stop()
    for output in outputs:
        assert output.startswith("token=[]\n")
        assert TOKEN not in output

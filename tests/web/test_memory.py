"""Memory and /init in the web UI, in Chromium against a real daemon on the offline demo model:
"# note" and "/remember user …" keep notes in plain files a new conversation is given, "/memory"
shows both files and saves an edit, "/init" asks the agent to write AGENTS.md."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from openvaala_server import prompts
from openvaala_server.client import Client
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced, run_async

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def test_hash_remember_memory_and_init(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(paced(0))
    project = daemon.workdir / ".openvaala" / "MEMORY.md"
    user = daemon.config_path.parent / "MEMORY.md"
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page

    ui.send("# use uv, not pip")
    expect(page.locator("#errors")).to_contain_text(f"Remembered in {project}")
    assert project.read_text() == "- use uv, not pip\n"
    ui.send("/remember user answer briefly")
    expect(page.locator("#errors")).to_contain_text(f"Remembered in {user}")
    assert user.read_text() == "- answer briefly\n"
    assert ui.items(".item[data-type='user_message']") == []  # notes, not messages

    ui.send("/memory")
    panel = page.locator("#memory-panel")
    expect(panel).to_be_visible()
    expect(panel.locator(".memory-file")).to_have_count(2)
    mine = panel.locator(".memory-file[data-scope='project']")
    expect(mine).to_contain_text(str(project))
    expect(mine.locator("textarea")).to_have_value("- use uv, not pip\n")
    expect(panel.locator(".memory-file[data-scope='user'] textarea")).to_have_value(
        "- answer briefly\n"
    )
    mine.locator("textarea").fill("- use uv\n- run make lint\n")
    mine.locator(".memory-save").click()
    expect(mine.locator(".memory-status")).to_have_text("Saved.")
    assert project.read_text() == "- use uv\n- run make lint\n"
    panel.locator(".memory-close").click()

    # The context panel opens each part of the system prompt as it is sent: memory included.
    page.locator("#meter").click()
    memory_row = page.locator("#context-panel tr[data-kind='memory']").last  # the project's
    memory_row.locator("summary").click()
    expect(memory_row.locator(".part-text")).to_contain_text("- run make lint")
    page.locator("#context-panel .context-close").click()

    ui.send("/init")
    expect(page.locator("#transcript .item[data-type='user_message']")).to_contain_text(
        prompts.init_request().splitlines()[0]
    )
    ui.wait_idle()

    async def new_context() -> str:
        client: Client = await daemon.client("check")
        try:
            created = await client.request("conversation/create", {"cwd": str(daemon.workdir)})
            cid = created["conversation"]["conversationId"]
            trace = await client.request("conversation/context", {"conversationId": cid})
            return "".join(p["text"] for p in trace["parts"] if p["kind"] == "memory")
        finally:
            await client.close()

    memory = run_async(new_context)
    assert "- answer briefly" in memory and "- run make lint" in memory

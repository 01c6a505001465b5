"""The browser shows what "allow for this conversation" covers before the user clicks it, and
never claims a grant the daemon could not make (docs/security.md, "Approvals"). Real daemon,
real Chromium, demo model (`run: CMD`), an agent with `approval = "always"`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import expect

from openvaala_server.client import Client
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, run_async
from tests.web.test_approvals import ASKING_CONFIG, card, expect_pending, pending_card

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def test_the_grant_button_names_the_exact_command(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    ui = ui_factory(daemon_factory(ASKING_CONFIG))
    ui.login()
    ui.new_conversation()
    ui.send("run: echo hi")
    expect_pending(ui)
    scope = "shell: exactly the command `echo hi`; nothing else"
    grant = pending_card(ui.page).locator(".approval-allow-conversation")
    expect(grant).to_have_text(f"Allow for this conversation: {scope}")
    expect(grant).to_be_enabled()
    grant.click()
    outcome = card(ui.page).locator(".approval-outcome")
    expect(outcome).to_have_text(f"Allowed for this conversation: {scope}")
    assert ui.console_errors == []


def test_a_command_with_a_shell_operator_offers_no_grant_and_claims_none(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(ASKING_CONFIG)
    ui = ui_factory(daemon)
    ui.login()
    cid = ui.new_conversation()
    ui.send("run: echo one > a.txt")
    expect_pending(ui, "echo one > a.txt")
    grant = pending_card(ui.page).locator(".approval-allow-conversation")
    expect(grant).to_be_disabled()
    expect(grant).to_contain_text("Cannot be allowed for this conversation")
    expect(grant).to_contain_text("shell operator")
    approval_id = pending_card(ui.page).get_attribute("data-approval-id")
    assert approval_id

    async def answer() -> dict[str, Any]:
        # Another client answers "allow for this conversation" all the same.
        client: Client = await daemon.client()
        try:
            await client.subscribe(cid)
            return dict(await client.respond_approval(cid, approval_id, "allow_conversation"))
        finally:
            await client.close()

    assert run_async(answer)["decision"] == "allow"
    outcome = card(ui.page).locator(".approval-outcome")
    expect(outcome).to_contain_text("Allowed once. Not remembered for this conversation")
    expect(outcome).not_to_contain_text("Allowed for this conversation")
    assert ui.console_errors == []

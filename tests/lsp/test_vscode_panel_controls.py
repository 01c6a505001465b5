"""The VS Code chat panel's controls beyond a plain turn (docs/editors.md, "The chat panel"), each
against the real bridge and one daemon whose demo agent asks before every shell command:
"Allow for this conversation" on an approval (the grant made, the same command then not asked,
another one asked); Jump from the composer and from a waiting message (the running turn
interrupted, the message answered next); Withdraw (the daemon's waiting list emptied, the text
back in the composer); the agent's plan shown and updated live; a subagent followed (its stream,
and its approval answered from its transcript). test_vscode_panel.py's harness: the page in
Chromium under chat_view.js's HTML."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page, expect

from tests.lsp.test_vscode_panel import Relay, html, media, open_daemon_panel
from tests.lsp.test_vscode_panel import pytestmark as harness_mark
from tests.support.daemon import Daemon, make_daemon

__all__ = ["html", "media"]  # the harness's fixtures

# One daemon, bridge and page for the module (each test opens a conversation of its own), on one
# event loop: starting Chromium and the bridge is most of such a test's time.
pytestmark = [harness_mark, pytest.mark.asyncio(loop_scope="module")]

ASKING = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "asks before every shell command"
model = "demo"
approval = "always"
"""


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon for the module: each test works in a conversation of its own."""
    d = make_daemon(tmp_path_factory.mktemp("panel-controls"), ASKING)
    d.start()
    yield d
    d.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def panel(daemon: Daemon, media: str, html: str) -> AsyncIterator[tuple[Page, Relay]]:
    async with open_daemon_panel(daemon, media, html) as (page, relay):
        yield page, relay


async def new_conversation(page: Page) -> str:
    """A new conversation on screen (the page may show the previous test's)."""
    picker = page.locator("#picker")
    before = await picker.input_value()
    await page.click("#new")
    await expect(picker).not_to_have_value(before)
    return await picker.input_value()


async def send(page: Page, text: str, button: str = "#send") -> None:
    await page.fill("#text", text)
    await page.click(button)
    await expect(page.locator("#text")).to_have_value("")


def approvals_asked(rec: Any, cid: str) -> list[dict[str, Any]]:
    return [
        e["params"]
        for e in rec.events
        if e["method"] == "approval/requested" and e["conversationId"] == cid
    ]


async def test_allow_for_this_conversation_grants_exactly_that_command(
    panel: tuple[Page, Relay],
) -> None:
    page, relay = panel
    cid = await new_conversation(page)
    await send(page, "run: echo granted")
    card = page.locator("section.approval")
    grant = card.get_by_role("button", name="Allow for this conversation: shell: exactly")
    await expect(grant).to_contain_text("`echo granted`")
    await grant.click()
    await expect(card.locator(".outcome")).to_contain_text("Allowed for this conversation")
    await expect(page.locator("details.tool pre.output").first).to_contain_text("granted")
    await page.wait_for_selector("body[data-status=idle]")

    # The same command again: it runs without a question.
    await send(page, "run: echo granted")
    await expect(page.locator("details.tool pre.output")).to_have_count(2)
    await expect(page.locator("details.tool pre.output").last).to_contain_text("granted")
    await page.wait_for_selector("body[data-status=idle]")
    assert len(approvals_asked(relay.rec, cid)) == 1
    await expect(card).to_have_count(1)

    # Exactly that command: another one asks again.
    await send(page, "run: echo other")
    await expect(card).to_have_count(2)
    await expect(card.last.get_by_role("button", name="Accept", exact=True)).to_be_visible()
    assert len(approvals_asked(relay.rec, cid)) == 2


async def test_jump_and_withdraw_while_an_approval_waits(
    panel: tuple[Page, Relay], daemon: Daemon
) -> None:
    page = panel[0]
    cid = await new_conversation(page)
    client = await daemon.client()
    try:
        # A turn kept running by a question nobody answers.
        await send(page, "run: echo never")
        await expect(page.locator("section.approval")).to_have_count(1)

        # Queued behind it, then withdrawn: back in the composer, gone from the daemon's list.
        await send(page, "a second thought")
        waiting = page.locator("#inbox .waiting")
        await expect(waiting.locator(".waiting-text")).to_have_text("(queue) a second thought")
        await page.fill("#text", "typed meanwhile")
        await waiting.get_by_role("button", name="Withdraw").click()
        await expect(waiting).to_have_count(0)
        await expect(page.locator("#text")).to_have_value("a second thought\n\ntyped meanwhile")
        read = await client.request("conversation/subscribe", {"conversationId": cid})
        snapshot = read["snapshot"]
        assert snapshot is not None and [s["inbox"] for s in snapshot["sessions"]] == [[]]

        # Queued again, then made to jump: the waiting turn stops, the message goes next.
        await send(page, "the waiting one jumps")
        await waiting.get_by_role("button", name="Jump").click()
        await expect(page.locator("section.approval .outcome")).to_contain_text("Rejected")
        users = page.locator("article.msg.user .text")
        await expect(users.last).to_have_text("the waiting one jumps")
        await page.wait_for_selector("body[data-status=idle]")

        # Jump from the composer while another question waits: the same, typed directly.
        await send(page, "run: echo not this either")
        await expect(page.locator("section.approval")).to_have_count(2)
        await send(page, "jumped in", "#jump")
        await expect(page.locator("section.approval .outcome")).to_have_count(2)
        await expect(users.last).to_have_text("jumped in")
        await expect(page.locator("article.msg.agent").last).to_contain_text("jumped in")
        assert not (daemon.workdir / "never").exists()
    finally:
        await client.close()


def plan_call(*steps: tuple[str, str]) -> str:
    plan = [{"step": step, "status": status} for step, status in steps]
    return "call: update_plan " + json.dumps({"plan": plan})


async def test_the_plan_is_shown_and_updated_live(panel: tuple[Page, Relay]) -> None:
    page = panel[0]
    await new_conversation(page)
    plan = page.locator("#plan")
    await expect(plan).to_be_hidden()
    await send(page, plan_call(("Read the code", "in_progress"), ("Fix it", "pending")))
    steps = plan.locator("li")
    await expect(steps).to_have_text(["☐ Read the code", "☐ Fix it"])
    await expect(steps.first).to_have_class("in_progress")
    await page.wait_for_selector("body[data-status=idle]")
    drawn = await page.evaluate("window.openvaalaPanel.stats.fullRenders")

    await send(page, plan_call(("Read the code", "completed"), ("Fix it", "in_progress")))
    await expect(steps).to_have_text(["☑ Read the code", "☐ Fix it"])
    await expect(steps.nth(1)).to_have_class("in_progress")
    # Live: drawn by the events, the transcript never drawn whole again.
    assert await page.evaluate("window.openvaalaPanel.stats.fullRenders") == drawn


async def test_following_a_subagent_shows_its_stream_and_answers_its_approval(
    panel: tuple[Page, Relay],
) -> None:
    page = panel[0]
    await new_conversation(page)
    await send(page, "spawn: run: echo from the subagent")
    agents = page.locator("#agents button")
    await expect(agents).to_have_count(2)
    await agents.last.click()
    await expect(agents.last).to_have_class("current")

    # Its transcript: the task from its parent, its call, and its own question.
    await expect(page.locator("article.msg.user .who").first).to_have_text("From the parent agent")
    await expect(page.locator("article.msg.user .text").first).to_have_text(
        "run: echo from the subagent"
    )
    card = page.locator("section.approval")
    await expect(card).to_have_count(1)
    await card.get_by_role("button", name="Accept", exact=True).click()
    await expect(card.locator(".outcome")).to_have_text("Accepted")
    output = page.locator("details.tool pre.output")
    await expect(output).to_contain_text("from the subagent")
    await expect(page.locator("article.msg.agent").last).to_contain_text("from the subagent")

    # Back to the root agent: its own transcript, its spawn_agent call, and the subagent's
    # report named as such (not as the user's message, nor with the user's actions).
    await agents.first.click()
    users = page.locator("article.msg.user")
    await expect(users.first.locator(".text")).to_have_text("spawn: run: echo from the subagent")
    await expect(page.locator("details.tool code").first).to_have_text("spawn_agent")
    report = users.filter(has_text="Subagent report")
    await expect(report.locator(".text")).to_contain_text("from the subagent")
    await expect(report.get_by_role("button")).to_have_count(0)


async def test_the_permission_mode_select_switches_and_follows_other_clients(
    panel: tuple[Page, Relay], daemon: Daemon
) -> None:
    page, relay = panel
    cid = await new_conversation(page)
    client = await daemon.client()

    def announced(mode: str) -> bool:
        return any(
            e["method"] == "conversation/updated"
            and e["conversationId"] == cid
            and e["params"]["conversation"].get("permissionMode") == mode
            for e in relay.rec.events
        )

    try:
        select = page.locator("#permission-mode")
        # This agent asks before every write: auto-edit is not offered.
        await expect(select).to_have_value("ask")
        await expect(select.locator("option")).to_have_text(["Plan (read-only)", "Ask every write"])

        await select.select_option("plan")  # openvaala/setPermissionMode through the bridge
        await relay.rec.until(lambda: announced("plan"), timeout=30)
        read = await client.request("conversation/subscribe", {"conversationId": cid})
        assert read["snapshot"] is not None
        assert read["snapshot"]["conversation"]["permissionMode"] == "plan"

        # Another client switches it back: the select follows.
        await client.request(
            "conversation/setPermissionMode", {"conversationId": cid, "mode": "ask"}
        )
        await expect(select).to_have_value("ask")
    finally:
        await client.close()

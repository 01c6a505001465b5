"""Approvals in the browser: a shell call the agent's policy asks about shows a card in every
page on the conversation; Allow runs it, Deny (with a message) refuses it, an answer from
another client resolves the card, and the whole thing works from the keyboard alone."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from playwright.sync_api import Locator, Page, WebSocketRoute, expect

from openvaala_server.client import Client
from tests.support.daemon import Daemon
from tests.support.events import collect_until, method_is, snapshot_of, turn_ended
from tests.web.conftest import WebUI, run_async
from tests.web.test_state import page_script

DaemonFactory = Callable[..., Daemon]
# What `echo hi` printed, as the shell tool reports it (a line "hi", then its exit code).
PRINTED_HI = re.compile(r"^hi$", re.MULTILINE)
UIFactory = Callable[[Daemon], WebUI]

# Every shell command asks first; "echo hi" is not in `allow`.
ASKING_CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
approval = "always"
"""


def card(page: Page) -> Locator:
    return page.locator("#transcript .item[data-type='approval']")


def pending_card(page: Page) -> Locator:
    return page.locator("#transcript .approval-pending")


def expect_pending(ui: WebUI, command: str = "echo hi") -> None:
    page = ui.page
    expect(pending_card(page)).to_have_count(1)
    expect(pending_card(page).locator(".approval-summary")).to_have_text(command)
    expect(pending_card(page).locator(".tool-name")).to_have_text("shell")
    expect(pending_card(page).locator(".approval-agent")).to_have_text("default")
    expect(pending_card(page)).to_have_attribute("role", "group")
    expect(page.locator("#activity")).to_have_text("Waiting for your approval…")
    # The turn is in progress: Stop is offered.
    expect(page.locator("#composer")).to_have_attribute("data-running", "true")
    expect(page.locator("#stop")).to_be_visible()


def tool_result(page: Page) -> Locator:
    return page.locator("#transcript .item[data-type='tool_result']")


def test_allow_from_one_page_runs_the_command_and_resolves_the_other(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(ASKING_CONFIG)
    one = ui_factory(daemon)
    one.login()
    cid = one.new_conversation()
    two = ui_factory(daemon)
    two.login(cid)
    expect(two.page.locator("#composer-text")).to_be_enabled()

    one.send("run: echo hi")
    for ui in (one, two):
        expect_pending(ui)
        # The conversation list says it waits for the user.
        row = ui.page.locator(f"#conv-list [data-conversation-id='{cid}']")
        expect(row).to_have_attribute("data-status", "awaiting_approval")
    # Nothing ran while it waits.
    expect(tool_result(one.page).locator(".tool-output")).to_have_count(0)
    one.screenshot("approval-card")

    pending_card(one.page).get_by_role("button", name="Allow once").click()
    for ui in (one, two):
        expect(card(ui.page).locator(".approval-outcome")).to_have_text("Allowed once")
        expect(pending_card(ui.page)).to_have_count(0)
        expect(tool_result(ui.page).locator(".tool-output")).to_have_text(PRINTED_HI)
        ui.wait_idle()
        expect(ui.page.locator(".tool-status")).to_have_text("done")
        expect(ui.page.locator("#activity")).to_be_hidden()
    assert one.console_errors == [] and two.console_errors == []


def test_deny_with_a_message_reaches_the_model_and_the_other_page(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(ASKING_CONFIG)
    one = ui_factory(daemon)
    one.login()
    cid = one.new_conversation()
    two = ui_factory(daemon)
    two.login(cid)
    expect(two.page.locator("#composer-text")).to_be_enabled()

    one.send("run: echo hi")
    expect_pending(two)
    # Model-controlled text shows as text: the message box takes plain text too.
    two.page.locator(".approval-pending .approval-message").fill("not <b>now</b>, use printf")
    two.page.locator(".approval-pending").get_by_role("button", name="Deny").click()
    for ui in (one, two):
        outcome = card(ui.page).locator(".approval-outcome")
        expect(outcome).to_have_text("Denied: not <b>now</b>, use printf")
        expect(outcome.locator("b")).to_have_count(0)
        ui.wait_idle()
        result = tool_result(ui.page)
        expect(result.locator(".tool-status")).to_have_text("error")
        expect(result.locator(".tool-output")).to_contain_text("not <b>now</b>, use printf")
        expect(result.locator(".tool-output")).not_to_have_text(PRINTED_HI)
    one.screenshot("approval-denied")


def test_an_answer_from_a_python_client_resolves_the_card(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(ASKING_CONFIG)
    ui = ui_factory(daemon)
    ui.login()
    cid = ui.new_conversation()
    ui.send("run: echo hi")
    expect_pending(ui)
    approval_id = pending_card(ui.page).get_attribute("data-approval-id")
    assert approval_id

    async def answer() -> dict[str, Any]:
        client: Client = await daemon.client()
        try:
            snapshot = await snapshot_of(client, cid)
            pending = [a["approvalId"] for a in snapshot["approvals"]]
            assert pending == [approval_id]  # the page shows the daemon's request
            return dict(await client.respond_approval(cid, approval_id, "allow_conversation"))
        finally:
            await client.close()

    assert run_async(answer)["decision"] == "allow_conversation"
    expect(card(ui.page).locator(".approval-outcome")).to_have_text(
        "Allowed for this conversation: shell: exactly the command `echo hi`; nothing else"
    )
    expect(tool_result(ui.page).locator(".tool-output")).to_have_text(PRINTED_HI)
    ui.wait_idle()
    # Allowed for the conversation: the same command runs again without a card.
    ui.send("run: echo hi")
    expect(tool_result(ui.page)).to_have_count(2)
    expect(tool_result(ui.page).last.locator(".tool-output")).to_have_text(PRINTED_HI)
    ui.wait_idle()
    expect(card(ui.page)).to_have_count(1)


def test_the_command_in_a_card_is_text_not_markup(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(ASKING_CONFIG)
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    command = "echo '<img src=x onerror=alert(1)><b>bold</b>'"
    ui.send(f"run: {command}")
    pending = pending_card(ui.page)
    expect(pending.locator(".approval-summary")).to_have_text(command)
    expect(pending.locator("img, b")).to_have_count(0)
    pending.get_by_role("button", name="Deny").click()
    expect(card(ui.page).locator(".approval-outcome")).to_have_text("Denied")
    expect(card(ui.page).locator(".approval-summary")).to_have_text(command)
    ui.wait_idle()
    expect(ui.page.locator("#transcript img, #transcript b")).to_have_count(0)
    assert ui.console_errors == []


def test_the_card_is_answered_from_the_keyboard(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(ASKING_CONFIG)
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    page.focus("#composer-text")
    page.keyboard.type("run: echo hi")
    page.keyboard.press("Enter")
    expect_pending(ui)
    # The composer was left empty by the send: focus moves to the card (not to a button).
    expect(pending_card(page)).to_be_focused()
    page.keyboard.press("Enter")  # a stray Enter on the card answers nothing
    expect(pending_card(page)).to_have_count(1)
    page.keyboard.press("Tab")
    expect(pending_card(page).get_by_role("button", name="Allow once")).to_be_focused()
    page.keyboard.press("Tab")
    allow_all = pending_card(page).get_by_role("button", name="Allow for this conversation")
    expect(allow_all).to_be_focused()
    page.keyboard.press("Tab")
    expect(pending_card(page).locator(".approval-message")).to_be_focused()
    page.keyboard.type("no thanks")
    page.keyboard.press("Tab")
    expect(pending_card(page).get_by_role("button", name="Deny")).to_be_focused()
    page.keyboard.press("Enter")
    outcome = card(page).locator(".approval-outcome")
    expect(outcome).to_have_text("Denied: no thanks")
    # Focus stays on the answered card (its outcome), and the status change is announced.
    expect(card(page)).to_be_focused()
    expect(page.locator("#announce")).to_contain_text("Denied: no thanks: shell")
    ui.wait_idle()
    expect(tool_result(page).locator(".tool-output")).to_contain_text("no thanks")


def test_a_card_does_not_take_focus_from_someone_typing(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(ASKING_CONFIG)
    ui = ui_factory(daemon)
    ui.login()
    cid = ui.new_conversation()
    page = ui.page
    page.fill("#composer-text", "half a thought")
    page.focus("#composer-text")

    async def ask() -> None:
        client: Client = await daemon.client()
        try:
            await client.request(
                "input/send", {"conversationId": cid, "text": "run: echo hi", "mode": "queue"}
            )
        finally:
            await client.close()

    run_async(ask)
    expect_pending(ui)
    expect(page.locator("#announce")).to_contain_text(
        "default waits for your approval to run shell"
    )
    expect(page.locator("#composer-text")).to_be_focused()
    expect(page.locator("#composer-text")).to_have_value("half a thought")
    # The card is the last thing above the composer: Shift+Tab reaches it (arguments, then Deny).
    page.keyboard.press("Shift+Tab")
    expect(pending_card(page).locator(".approval-arguments summary")).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(pending_card(page).get_by_role("button", name="Deny")).to_be_focused()
    # Stop interrupts the turn waiting for the answer: the card resolves as denied.
    page.click("#stop")
    expect(card(page).locator(".approval-outcome")).to_contain_text("Denied")
    ui.wait_idle()


def is_notification(message: str | bytes) -> bool:
    return '"method"' in str(message)


def is_answer(message: str | bytes) -> bool:
    return not is_notification(message)


class HeldMessages:
    """The page's websocket, routed through Playwright: while `holding`, the daemon's messages
    that `hold` picks (notifications, or answers to the page's requests) wait here and the rest
    pass; `release` delivers the held ones in order. This lets a test decide which of two
    messages the page sees first."""

    def __init__(self, hold: Callable[[str | bytes], bool]) -> None:
        self.hold = hold
        self.holding = False
        self.held: list[str | bytes] = []
        self.page_side: WebSocketRoute | None = None

    def route(self, ws: WebSocketRoute) -> None:
        self.page_side = ws
        server = ws.connect_to_server()

        def from_daemon(message: str | bytes) -> None:
            if self.holding and self.hold(message):
                self.held.append(message)
            else:
                ws.send(message)

        server.on_message(from_daemon)

    def release(self) -> None:
        self.holding = False
        assert self.page_side is not None
        for message in self.held:
            self.page_side.send(message)
        self.held.clear()


def test_a_card_shown_before_the_send_is_answered_takes_focus_after_it(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(ASKING_CONFIG)
    ui = ui_factory(daemon)
    socket = HeldMessages(is_answer)
    ui.page.route_web_socket(re.compile(r"/ws$"), socket.route)
    ui.login()
    ui.new_conversation()
    page = ui.page
    page.fill("#composer-text", "run: echo hi")
    socket.holding = True
    page.press("#composer-text", "Enter")
    # The turn's card arrives while the composer still holds the message being sent.
    waiting = pending_card(page)
    expect(waiting).to_have_count(1)
    expect(page.locator("#composer-text")).to_have_value("run: echo hi")
    expect(page.locator("#composer-text")).to_be_focused()
    socket.release()
    expect(page.locator("#composer-text")).to_have_value("")
    expect(waiting).to_be_focused()


def test_an_answer_that_lost_the_race_shows_a_notice(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(ASKING_CONFIG)
    ui = ui_factory(daemon)
    socket = HeldMessages(is_notification)
    ui.page.route_web_socket(re.compile(r"/ws$"), socket.route)
    ui.login()
    cid = ui.new_conversation()
    page = ui.page
    ui.send("run: echo hi")
    expect_pending(ui)
    approval_id = pending_card(page).get_attribute("data-approval-id")
    assert approval_id

    # Another client answers first; the page does not know yet.
    socket.holding = True

    async def answer_first() -> None:
        client: Client = await daemon.client()
        try:
            await client.respond_approval(cid, approval_id, "deny", "mine was first")
        finally:
            await client.close()

    run_async(answer_first)
    pending_card(page).get_by_role("button", name="Allow once").click()
    # The daemon refuses the second answer: the card and the error strip say so, quietly.
    expect(pending_card(page).locator(".approval-notice")).to_have_text(
        "Already answered elsewhere"
    )
    expect(page.locator("#errors .error[data-kind='info']")).to_contain_text(
        "Already answered elsewhere"
    )
    for button in pending_card(page).get_by_role("button").all():
        expect(button).to_be_disabled()
    # The news arrives: the card shows the answer that won.
    socket.release()
    expect(card(page).locator(".approval-outcome")).to_have_text("Denied: mine was first")
    ui.wait_idle()
    expect(tool_result(page).locator(".tool-output")).to_contain_text("mine was first")
    expect(tool_result(page).locator(".tool-output")).not_to_have_text(PRINTED_HI)


# The main agent never asks; the helper it starts asks before every shell command.
SUBAGENT_CONFIG = """
default_agent = "default"

[models.demo]
provider = "demo"
pace_ms = 0

[agents.helper]
description = "Runs commands"
model = "demo"
approval = "always"

[agents.default]
description = "General assistant"
model = "demo"
"""


def test_a_subagents_request_shows_in_the_main_transcript_with_its_name(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(SUBAGENT_CONFIG)
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    ui.send("spawn: run: echo hi")
    pending = pending_card(page)
    expect(pending).to_have_count(1)
    expect(pending.locator(".approval-agent")).to_have_text("helper")
    expect(pending.locator(".approval-summary")).to_have_text("echo hi")
    expect(page.locator("#activity")).to_contain_text("Waiting for your approval")
    # The helper waits: the Agents tab says so, and its Interrupt button works then.
    page.click("#tab-agents")
    helper = page.locator("#agents .agent[data-depth='1']")
    expect(helper.locator(".agent-status")).to_have_text("awaiting approval")
    expect(helper.locator(".agent-interrupt")).to_be_enabled()
    # Followed, the helper's own transcript shows the same request.
    helper.locator(".agent-follow").click()
    expect(pending_card(page).locator(".approval-agent")).to_have_text("helper")
    pending_card(page).get_by_role("button", name="Allow once").click()
    expect(card(page).locator(".approval-outcome")).to_have_text("Allowed once")
    expect(tool_result(page).locator(".tool-output")).to_have_text(PRINTED_HI)
    page.click("#follow-back")
    expect(card(page).locator(".approval-outcome")).to_have_text("Allowed once")
    assert ui.console_errors == []


RECORDED_FOLD = page_script("recorded_fold_check.js")


def test_the_fold_of_a_recorded_approval_turn(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(ASKING_CONFIG)

    async def record() -> dict[str, Any]:
        client: Client = await daemon.client()
        late: Client = await daemon.client()
        try:
            created = await client.request("conversation/create", {"cwd": str(daemon.workdir)})
            cid = created["conversation"]["conversationId"]
            before = await client.subscribe(cid)
            await client.request(
                "input/send", {"conversationId": cid, "text": "run: echo hi", "mode": "queue"}
            )
            notes = await collect_until(client, method_is("approval/requested"))
            during = await late.subscribe(cid)
            approval_id = notes[-1]["params"]["approvalId"]
            await client.respond_approval(cid, approval_id, "deny", "recorded: no")
            notes += await collect_until(client, turn_ended())
            return {"before": before, "during": during, "notes": notes, "id": approval_id}
        finally:
            await late.close()
            await client.close()

    recorded = run_async(record)
    ui = ui_factory(daemon)
    ui.login()
    out: dict[str, Any] = ui.page.evaluate(RECORDED_FOLD, recorded)
    assert set(out["statuses"]) == {"applied"}
    waiting = out["whileWaiting"]
    assert waiting is not None, "the daemon never said the session awaits approval"
    assert waiting["awaiting"] is True
    assert waiting["pending"] == ["shell echo hi"]
    assert waiting["busy"] == "a tool call waits for approval"
    assert waiting["items"][-2:] == ["tool_call:completed", "approval:pending"]
    # Answered: the card, now its outcome, sits between the call and its (refused) result.
    kinds = [i.split(":")[0] for i in out["items"]]
    assert kinds.index("tool_call") < kinds.index("approval") < kinds.index("tool_result")
    assert "approval:resolved" in out["items"]
    assert out["approval"] == [["default", "shell", "echo hi", "deny", "recorded: no"]]
    assert out["awaitingAtEnd"] is False
    # A client that joined while it waited sees the same request and the same end.
    assert out["midPending"] == [recorded["id"]]
    assert out["midStatus"] == "awaiting_approval"
    assert "applied" in out["midStatuses"] and "gap" not in out["midStatuses"]
    assert out["midItems"] == out["items"]

"""The pure parts of the app (state fold, Markdown streaming, sanitizer) run in the page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]
HERE = Path(__file__).parent


def page_script(name: str) -> str:
    """A check kept as a .js file next to this one, minus its comment lines."""
    lines = (HERE / name).read_text().splitlines()
    return "\n".join(line for line in lines if not line.startswith("//"))


FOLD = page_script("fold_check.js")


def test_state_fold(daemon_factory: DaemonFactory, ui_factory: UIFactory) -> None:
    ui = ui_factory(daemon_factory(paced(0)))
    ui.login()
    out: dict[str, Any] = ui.page.evaluate(FOLD)
    assert out["delta"] == "applied"
    assert out["duplicate"] == "stale"
    assert out["old"] == "stale"
    assert out["gap"] == "gap"
    assert out["other"] == "ignored"
    assert out["text"] == "Hello"  # the duplicate and the gap changed nothing
    assert out["busy"] == "a turn is running"
    assert out["busyAfter"] == "messages are waiting"
    assert out["items"] == ["u1:completed", "a1:completed", "local-failed-T:failed"]
    assert out["tree"] == ["default@0", "helper@1", "grandchild@2"]
    assert out["first"] == "u1"
    assert out["afterPrepend"] == ["u0", "u1", "a1", "local-failed-T"]
    assert out["kept"] == ["local-failed-T", "n2"]
    assert out["busyCompacting"] == "the context is being compacted"
    assert out["seq"] == 23


STREAM = page_script("stream_check.js")


def test_markdown_stream_renders_only_the_growing_block(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    ui = ui_factory(daemon_factory(paced(0)))
    ui.login()
    out: dict[str, Any] = ui.page.evaluate(STREAM)
    assert out["streamed"].split() == out["full"].split()
    assert out["blocks"] == 4  # heading, paragraph, list, code: final; the last one still grows
    # One render of the tail per delta, plus one render per finished block: never the whole text.
    assert out["renders"] <= out["chunks"] + out["blocks"] + 1
    assert out["bold"] == 1
    assert out["code"] == "code <b>x</b>\n"
    assert out["heads"] == 1  # the finished code block got its copy bar while streaming
    assert "onerror" not in out["clean"] and "javascript" not in out["clean"]
    assert "<p>ok</p>" in out["clean"]


APPROVALS = page_script("approval_fold_check.js")


def test_approvals_fold(daemon_factory: DaemonFactory, ui_factory: UIFactory) -> None:
    ui = ui_factory(daemon_factory(paced(0)))
    ui.login()
    out: dict[str, Any] = ui.page.evaluate(APPROVALS)
    # The snapshot's pending request is a card after the tool call it is about.
    assert out["pendingAtStart"] == ["a1"]
    assert out["rootItems"] == ["tc:completed", "approval-a1:pending"]
    assert out["card"]["summary"] == "echo hi"
    assert out["card"]["agent"] == "default"
    assert out["card"]["decision"] is None
    assert out["rootWaits"] is True
    assert out["busy"] == "a tool call waits for approval"
    # A subagent's request: in its own transcript and in the root's, under its name.
    assert out["subStatus"] == "applied"
    assert out["subChanges"] == ["approval:a2", "itemAdded:k", "itemAdded:r"]
    assert out["subItems"] == ["approval-a2:pending"]
    assert out["rootAfterSub"] == ["tc:completed", "approval-a1:pending", "approval-a2:pending"]
    assert out["subAgent"] == "helper"
    assert out["subWaits"] is True
    # Resolved: the same card, now its outcome, with the user's message.
    assert out["deniedChanges"] == ["approval:a1", "itemUpdated:r"]
    assert out["denied"]["decision"] == "deny"
    assert out["denied"]["message"] == "not now"
    assert out["rootAfterDeny"] == ["tc:completed", "approval-a1:resolved", "approval-a2:pending"]
    assert out["rootWaitsAfter"] is False
    assert out["allowed"] == "allow_conversation"
    assert out["pendingAtEnd"] == 0
    assert out["busyAfter"] == "a turn is running"
    assert out["unknown"] == 0
    assert out["repeat"] == "stale"
    assert out["allowedStill"] == "allow_conversation"
    assert out["first"] == "tc"
    assert out["seq"] == 16

"""Custom slash commands from prompt files, the user's and the project's: listed in /help and
completion, `$ARGUMENTS` replaced, sent to the model as the message."""

from __future__ import annotations

from typing import Any

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import UserMessage
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.tui.conftest import Clients, notices, ready, type_and_send, wait_for
from tests.tui.test_pilot_habits import AGENT_ON_FAKE, popup_values


async def test_custom_commands_from_user_and_project_files(
    fake_openai: FakeProvider, daemon_factory: Any, clients: Clients
) -> None:
    fake_openai.default_reply = Reply().text("ok")
    daemon = daemon_factory(fake_openai.config_toml("fake") + AGENT_ON_FAKE)
    user = daemon.config_path.parent / "commands"
    user.mkdir()
    (user / "explain.md").write_text(
        "---\ndescription: Explain a file simply\n---\nExplain $ARGUMENTS to a newcomer.\n"
    )
    (user / "review.md").write_text("The user's review of $ARGUMENTS.\n")
    (user / "help.md").write_text("A file cannot replace a built-in command.\n")
    project = daemon.workdir / ".openvaala" / "commands"
    project.mkdir(parents=True)
    (project / "review.md").write_text("# Review\nReview $ARGUMENTS for bugs, then $ARGUMENTS.\n")

    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/help")
        await wait_for(pilot, lambda: any("Custom commands" in n for n in notices(app)))
        listed = next(n for n in notices(app) if "Custom commands" in n)
        assert "/explain (Explain a file simply)" in listed
        assert "/review (Review)" in listed  # the project's file wins over the user's
        assert "A file cannot replace" not in listed

        await pilot.press("/", "e", "x", "p")
        await wait_for(pilot, lambda: popup_values(app) == ["/explain"], what="completion")
        await pilot.press("tab", *"parser.py", "enter")
        await wait_for(pilot, lambda: len(app.transcript.query(UserMessage)) == 1)
        sent = str(app.transcript.query(UserMessage)[0].item.get("text"))
        assert sent == "Explain parser.py to a newcomer."
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: not root.running, what="the turn")
        assert "Explain parser.py to a newcomer." in fake_openai.last_request.body.decode()

        await type_and_send(pilot, "/review lexer.py")
        await wait_for(pilot, lambda: len(app.transcript.query(UserMessage)) == 2)
        sent = str(app.transcript.query(UserMessage)[1].item.get("text"))
        assert sent == "# Review\nReview lexer.py for bugs, then lexer.py."

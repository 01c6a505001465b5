"""Custom slash commands from prompt files, the user's (beside the daemon's config.toml) and the
project's: listed in /help and completion, `$ARGUMENTS` replaced, sent as the message. A
project's commands are repository content: their text is a prompt, never a `!` shell command run
on the user's behalf, and they attach no file from outside the project.

The terminal UI reads the files and expands them itself: on a fake client
(tests/tui/fake_client.py) whose `input/send` is what the daemon is sent."""

from __future__ import annotations

from pathlib import Path

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import UserMessage
from tests.tui.conftest import notices, ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.test_pilot_habits import popup_values


def on_disk(tmp_path: Path) -> tuple[FakeClient, Path, Path]:
    """A fake whose daemon read `tmp_path/config/config.toml`; the project's directory and its
    commands' (`.openvaala/commands/`)."""
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir()
    project = tmp_path / "project"
    commands = project / ".openvaala" / "commands"
    commands.mkdir(parents=True)
    fake = FakeClient(config={"path": str(config), "state": "ok", "message": ""})
    fake.answer_sends("ok")
    return fake, project, commands


def sent(fake: FakeClient) -> list[str]:
    return [str(params.get("text")) for params in fake.params_of("input/send")]


async def test_custom_commands_from_user_and_project_files(tmp_path: Path) -> None:
    fake, work, project = on_disk(tmp_path)
    user = tmp_path / "config" / "commands"
    user.mkdir()
    (user / "explain.md").write_text(
        "---\ndescription: Explain a file simply\n---\nExplain $ARGUMENTS to a newcomer.\n"
    )
    (user / "review.md").write_text("The user's review of $ARGUMENTS.\n")
    (user / "help.md").write_text("A file cannot replace a built-in command.\n")
    (project / "review.md").write_text("# Review\nReview $ARGUMENTS for bugs, then $ARGUMENTS.\n")

    app = VaalaApp(cwd=str(work), client=fake)
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
        shown = str(app.transcript.query(UserMessage)[0].item.get("text"))
        assert shown == "Explain parser.py to a newcomer."
        assert sent(fake) == ["Explain parser.py to a newcomer."]

        await type_and_send(pilot, "/review lexer.py")
        await wait_for(pilot, lambda: len(app.transcript.query(UserMessage)) == 2)
        shown = str(app.transcript.query(UserMessage)[1].item.get("text"))
        assert shown == "# Review\nReview lexer.py for bugs, then lexer.py."


async def test_a_project_command_starting_with_a_bang_runs_no_shell(tmp_path: Path) -> None:
    fake, work, project = on_disk(tmp_path)
    (project / "review.md").write_text("!touch pwned.txt\n")

    app = VaalaApp(cwd=str(work), client=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/review")
        await wait_for(pilot, lambda: len(app.transcript.query(UserMessage)) == 1)
        item = app.transcript.query(UserMessage)[0].item
        assert item.get("origin", "user") == "user"  # a message to the model, not shell output
        assert item.get("text") == "!touch pwned.txt"
    assert sent(fake) == ["!touch pwned.txt"]
    assert "shell/run" not in fake.methods()  # nothing asked the daemon to run it
    assert not (work / "pwned.txt").exists()


async def test_a_project_command_attaches_no_file_outside_the_project(tmp_path: Path) -> None:
    fake, work, project = on_disk(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("sk-not-for-the-model\n")
    (work / "inside.txt").write_text("project text\n")
    (project / "look.md").write_text(f"Look at @{secret} and @inside.txt\n")

    app = VaalaApp(cwd=str(work), client=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/look")
        await wait_for(pilot, lambda: len(app.transcript.query(UserMessage)) == 1)
        shown = str(app.transcript.query(UserMessage)[0].item.get("text"))
        assert "project text" in shown  # the project's own file is attached
        assert "sk-not-for-the-model" not in shown
    [text] = sent(fake)  # all the daemon (and so the model) is sent
    assert "project text" in text and "sk-not-for-the-model" not in text

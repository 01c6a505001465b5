"""A command cancelled in the real Codex TUI reads the same against OpenVaala as against Codex's
own app-server (docs/codex.md "Approvals"): "You canceled the request to run …", then the
command's cell "Exited (status 1) … (no output)", then "Conversation interrupted". Codex itself
is run with a provider faked at the wire (its `exec_command` tool asking to run outside its
sandbox); OpenVaala through `--remote` with an agent that asks before every command."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.codex.test_codex_tui import Tmux, asking_codex_tui, asking_daemon, codex_binary
from tests.fakes.providers import API_KEY_ENV, FakeProvider
from tests.fakes.script import Reply
from tests.fakes.wire import RESPONSES

__all__ = ["asking_codex_tui", "asking_daemon"]  # the fixtures

COMMAND = "echo hi > made.txt"


def _codex_config(fake: FakeProvider, work: Path) -> str:
    return (
        'model = "fake-model"\nmodel_provider = "fake"\n'
        'approval_policy = "on-request"\nsandbox_mode = "read-only"\n'
        f'[model_providers.fake]\nname = "fake"\nbase_url = "{fake.base_url()}"\n'
        f'wire_api = "responses"\nenv_key = "{API_KEY_ENV}"\n'
        f'[projects."{work}"]\ntrust_level = "trusted"\n'
    )


@pytest.fixture
def codex_itself(tmp_path: Path) -> Iterator[Tmux]:
    """The Codex TUI with its own app-server (in process: `--no-daemon` leaves nothing
    running), its model faked at the wire."""
    binary = codex_binary()
    if binary is None or shutil.which("tmux") is None:
        pytest.skip("the Codex CLI (.ci/run installs it) or tmux is not installed")
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    (home / ".codex").mkdir(parents=True)
    with FakeProvider(wire=RESPONSES) as fake:
        call = {
            "cmd": COMMAND,
            "sandbox_permissions": "require_escalated",
            "justification": "write a file",
        }
        fake.enqueue(Reply().tool_call("exec_command", call), Reply().text("never reached"))
        (home / ".codex" / "config.toml").write_text(_codex_config(fake, work))
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "CODEX_HOME": str(home / ".codex"),
            "TERM": "xterm-256color",
            **fake.env,
        }
        tmux = Tmux(f"openvaala-codex-itself-{os.getpid()}-{tmp_path.name}", env)
        command = f'{binary} --no-daemon; echo "codex exited: $?"; sleep 600'
        tmux.run("new-session", "-d", "-s", "codex", "-x", "160", "-y", "50", "-c", str(work))
        tmux.run("respawn-pane", "-k", "-t", "codex", command)
        try:
            yield tmux
        finally:
            subprocess.run(
                ["tmux", "-L", tmux.socket, "kill-server"], env=env, check=False, timeout=30
            )


def _cancelled(tui: Tmux, ask: str) -> list[str]:
    """Ask for the command, cancel it (Esc), and return what the TUI then shows of it."""
    tui.expect("Ask Codex to do anything")
    tui.submit(ask, then="Would you like to run the following command")
    tui.run("send-keys", "-t", "codex", "Escape")
    screen = tui.expect("Conversation interrupted")
    words = ("You canceled", "Exited", "(no output)", "interrupted")
    return [line.strip() for line in screen.splitlines() if any(w in line for w in words)]


@pytest.mark.timeout(300)
async def test_a_cancelled_command_reads_as_with_codex_itself(
    codex_itself: Tmux, asking_codex_tui: Tmux
) -> None:
    with_codex = _cancelled(codex_itself, "please run it")
    with_openvaala = _cancelled(asking_codex_tui, f"run: {COMMAND}")
    expected = [
        f"✗ You canceled the request to run {COMMAND}",
        f"• Exited (status 1) {COMMAND}",
        "└ (no output)",
        "■ Conversation interrupted - use /feedback if something went wrong",
    ]
    assert with_codex == expected, codex_itself.screen()
    assert with_openvaala == expected, asking_codex_tui.screen()

"""The real Codex TUI (`@openai/codex`, pinned in .ci/run) connected to the daemon with
`--remote`, driven in tmux: it starts without a login, a message typed there is answered by
OpenVaala's demo model, the conversation is the daemon's, and `/compact` compacts it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.codex.schema import CODEX_VERSION
from tests.codex.flows import demo_config
from tests.support.daemon import Daemon
from tests.support.events import collect_until, method_is, turn_ended

# Where .ci/run installs the pinned release (OPENVAALA_CODEX names another binary).
DEFAULT_PREFIX = Path.home() / ".cache" / "openvaala-codex" / CODEX_VERSION
WAIT_S = 60.0  # for the screen to show something: generous, the machine is shared


def codex_binary() -> str | None:
    named = os.environ.get("OPENVAALA_CODEX")
    if named:
        return named
    installed = DEFAULT_PREFIX / "node_modules" / ".bin" / "codex"
    return str(installed) if installed.exists() else None


class Tmux:
    """One tmux server of this test's own (its own socket): nothing else's sessions are seen."""

    def __init__(self, socket: str, env: dict[str, str]) -> None:
        self.socket = socket
        self.env = env

    def run(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return done.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "codex")

    def wait_for(self, text: str, within: float = WAIT_S) -> str | None:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)  # polling the screen for a condition, not a timed assertion
        return None

    def wait_until(self, shows: Callable[[str], bool], within: float = WAIT_S) -> bool:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if shows(self.screen()):
                return True
            time.sleep(0.2)  # polling the screen for a condition, not a timed assertion
        return False

    def expect(self, text: str) -> str:
        screen = self.wait_for(text)
        assert screen is not None, f"{text!r} never showed in the Codex TUI:\n{self.screen()}"
        return screen

    def submit(self, text: str, then: str) -> str:
        """Type `text`, press Enter until `then` shows. The TUI takes keys that arrive in a
        burst for a paste, where Enter is a newline: an Enter after it has settled submits.
        The text is awaited in the prompt itself: elsewhere it may show already (the welcome
        screen lists `/status`), and an Enter before the TUI took it all would submit a part."""
        self.run("send-keys", "-t", "codex", "-l", text)
        typed = self.wait_until(lambda screen: _prompt(screen).endswith(text))
        assert typed, f"{text!r} never showed in the Codex TUI's prompt:\n{self.screen()}"
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            self.run("send-keys", "-t", "codex", "Enter")
            screen = self.wait_for(then, within=5)
            if screen is not None:
                return screen
        raise AssertionError(f"{then!r} never showed after {text!r}:\n{self.screen()}")


def _prompt(screen: str) -> str:
    """The line being typed: the last that starts with `›` (the messages sent are above it)."""
    lines = [line.strip() for line in screen.splitlines() if line.strip().startswith("›")]
    return lines[-1] if lines else ""


@pytest.fixture
def codex_tui(daemon: Daemon, tmp_path: Path) -> Iterator[Tmux]:
    with _codex_in_tmux(daemon, tmp_path) as tmux:
        yield tmux


@pytest.fixture
def asking_daemon(daemon_factory: Callable[..., Daemon]) -> Daemon:
    """A daemon whose agent asks before every command and every edit."""
    return daemon_factory(demo_config(approval="always"))


@pytest.fixture
def asking_codex_tui(asking_daemon: Daemon, tmp_path: Path) -> Iterator[Tmux]:
    with _codex_in_tmux(asking_daemon, tmp_path) as tmux:
        yield tmux


@contextlib.contextmanager
def _codex_in_tmux(daemon: Daemon, tmp_path: Path) -> Iterator[Tmux]:
    binary = codex_binary()
    if binary is None:
        pytest.skip(
            f"the Codex CLI {CODEX_VERSION} is not installed: .ci/run installs it "
            f"(npm install --prefix {DEFAULT_PREFIX} @openai/codex@{CODEX_VERSION}), "
            "or set OPENVAALA_CODEX to a codex binary"
        )
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (the Codex TUI test drives it in tmux)")
    home = tmp_path / "codex-home"
    home.mkdir()
    # The token reaches Codex through its environment, never a command line.
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "TERM": "xterm-256color",
        "OPENVAALA_TOKEN": daemon.token,
    }
    tmux = Tmux(f"openvaala-codex-{os.getpid()}-{tmp_path.name}", env)
    # The pane outlives Codex, so a failure shows what it said before it exited.
    command = (
        f"{binary} --remote ws://{daemon.address} --remote-auth-token-env OPENVAALA_TOKEN;"
        ' echo "codex exited: $?"; sleep 600'
    )
    tmux.run(
        "new-session",
        "-d",
        "-s",
        "codex",
        "-x",
        "160",
        "-y",
        "50",
        "-c",
        str(daemon.workdir),
        command,
    )
    try:
        yield tmux
    finally:
        subprocess.run(["tmux", "-L", tmux.socket, "kill-server"], env=env, check=False, timeout=30)


@pytest.mark.timeout(300)
async def test_the_codex_tui_drives_an_openvaala_conversation(
    codex_tui: Tmux, daemon: Daemon
) -> None:
    codex_tui.expect("Ask Codex to do anything")  # no login screen
    codex_tui.submit("hello from the codex tui", then="I am OpenVaala's offline demo model")

    async with await daemon.client() as client:
        listed = await client.request("conversation/list", {})
        [conversation] = listed["conversations"]
        assert conversation["title"] == "hello from the codex tui"
        assert conversation["cwd"] == str(daemon.workdir)
        cid = conversation["conversationId"]
        # The user's own view of it: `openvaala list`.
        listed_cli = daemon.cli("list", "--json")
        assert listed_cli.returncode == 0, listed_cli.stderr
        assert [c["title"] for c in json.loads(listed_cli.stdout)] == ["hello from the codex tui"]

        codex_tui.submit("/compact", then="Context compacted")
        page = await client.request("conversation/read", {"conversationId": cid})
        summaries = [i for i in page["items"] if i["type"] == "summary"]
        assert [s["reason"] for s in summaries] == ["manual"]


@pytest.mark.timeout(300)
async def test_compact_with_nothing_to_compact_leaves_the_codex_tui_usable(
    codex_tui: Tmux, daemon: Daemon
) -> None:
    codex_tui.expect("Ask Codex to do anything")
    # The turn ends at once ("Worked for"), its warning ("Nothing to compact: …") counted.
    codex_tui.submit("/compact", then="1 warning")
    # Not stuck in "Compacting": the next message is answered.
    codex_tui.submit("hello after compacting", then="I am OpenVaala's offline demo model")


@pytest.mark.timeout(300)
async def test_the_codex_tui_asks_for_the_command_line_as_written(
    asking_codex_tui: Tmux,
) -> None:
    """Shell syntax in an approval reads as it will run (a pipe is not shown as `'|'`)."""
    asking_codex_tui.expect("Ask Codex to do anything")
    screen = asking_codex_tui.submit(
        "run: echo hi | tee piped.txt", then="Would you like to run the following command"
    )
    assert "$ echo hi | tee piped.txt" in screen, screen
    assert "'|'" not in screen and "bash -c" not in screen, screen


@pytest.mark.timeout(300)
async def test_esc_on_an_approval_in_the_codex_tui_stops_the_turn(
    asking_codex_tui: Tmux, asking_daemon: Daemon
) -> None:
    """Esc ("No, and tell Codex what to do differently") answers `cancel`: the command does not
    run and the agent stops, waiting for what the user says instead."""
    asking_codex_tui.expect("Ask Codex to do anything")
    asking_codex_tui.submit("run: echo hi", then="Would you like to run the following command")
    asking_codex_tui.run("send-keys", "-t", "codex", "Escape")
    asking_codex_tui.expect("Conversation interrupted")
    async with await asking_daemon.client() as client:
        [conversation] = (await client.request("conversation/list", {}))["conversations"]
    assert conversation["status"] == "interrupted", conversation


@pytest.mark.timeout(300)
async def test_the_codex_tui_shows_the_edit_it_asks_for(
    asking_codex_tui: Tmux, asking_daemon: Daemon
) -> None:
    (asking_daemon.workdir / "keep.py").write_text("a = 1\nb = 2\n")
    asking_codex_tui.expect("Ask Codex to do anything")
    edit = {"path": "keep.py", "old_text": "b = 2", "new_text": "b = 3"}
    screen = asking_codex_tui.submit(
        f"call: edit_file {json.dumps(edit)}", then="Would you like to make the following edits"
    )
    assert "(+1 -1)" in screen and "b = 3" in screen, screen


@pytest.mark.timeout(300)
async def test_the_codex_tui_rewinds_an_openvaala_conversation(
    codex_tui: Tmux, daemon: Daemon
) -> None:
    answer = "I am OpenVaala's offline demo model"
    codex_tui.expect("Ask Codex to do anything")
    codex_tui.submit("first message", then=answer)
    codex_tui.run("send-keys", "-t", "codex", "-l", "second message")
    codex_tui.expect("second message")
    codex_tui.run("send-keys", "-t", "codex", "Enter")
    assert codex_tui.wait_until(lambda screen: screen.count(answer) >= 2), codex_tui.screen()
    # Esc Esc, Enter: rewind to the last message, which goes back to the composer. Esc is
    # pressed until the transcript overlay offers the rewind: on a loaded machine the first
    # Esc's hint ("esc again to edit previous message") was once never seen.
    for _ in range(12):
        codex_tui.run("send-keys", "-t", "codex", "Escape")
        if codex_tui.wait_until(lambda s: "↵ rewind" in s, within=5):
            break
    codex_tui.expect("↵ rewind")
    reverted = "Conversation reverted to this point"
    # An Enter right after the Escapes can be taken in their burst: pressed again only while
    # the transcript overlay still offers the rewind.
    while True:
        codex_tui.run("send-keys", "-t", "codex", "Enter")
        if codex_tui.wait_until(lambda s: reverted in s or "↵ rewind" not in s, within=5):
            break
    codex_tui.expect(reverted)
    # The session goes on (it used to exit: "refreshing the session timed out").
    screen = codex_tui.submit(" edited", then="You said: “second message edited”")
    assert "codex exited" not in screen and "timed out" not in screen, screen

    async with await daemon.client() as client:
        listed = (await client.request("conversation/list", {}))["conversations"]
        assert len(listed) == 2  # OpenVaala keeps the original; the rewind is a copy
        texts = {}
        for conversation in listed:
            page = await client.request(
                "conversation/read", {"conversationId": conversation["conversationId"]}
            )
            said = [i["text"] for i in page["items"] if i["type"] == "user_message"]
            texts[tuple(said)] = conversation
    assert set(texts) == {
        ("first message", "second message"),
        ("first message", "second message edited"),
    }


@pytest.mark.timeout(300)
async def test_the_codex_tui_shows_the_patch_it_asks_for(
    asking_codex_tui: Tmux, asking_daemon: Daemon
) -> None:
    """An `apply_patch` approval shows the diff at the file's own lines (the patch alone would
    number its hunk from 1)."""
    lines = [f"x{n} = {n}\n" for n in range(1, 11)]
    (asking_daemon.workdir / "keep.py").write_text("".join(lines))
    asking_codex_tui.expect("Ask Codex to do anything")
    patch = (
        "*** Begin Patch\n*** Update File: keep.py\n@@\n x7 = 7\n-x8 = 8\n+x8 = 80\n*** End Patch"
    )
    screen = asking_codex_tui.submit(
        f"call: apply_patch {json.dumps({'input': patch})}",
        then="Would you like to make the following edits",
    )
    assert "keep.py (+1 -1)" in screen, screen
    assert re.search(r"\b8 -x8 = 8\b", screen) and re.search(r"\b8 \+x8 = 80\b", screen), screen


@pytest.mark.timeout(300)
async def test_a_subagent_is_its_own_thread_in_the_codex_tui(
    codex_tui: Tmux, daemon: Daemon
) -> None:
    """The TUI's subagent switcher (Alt+→ on an empty prompt) opens the subagent's thread: its
    own transcript, live; a message typed there goes to that subagent; Alt+← goes back."""
    codex_tui.expect("Ask Codex to do anything")
    codex_tui.submit("spawn: say hi", then="Report from subagent")
    codex_tui.expect("Main [default]")  # the status line names the thread shown

    def on_subagent(screen: str) -> bool:  # the status line names the subagent's task
        return "· say hi [default]" in screen and "Main [default]" not in screen

    # Pressed again only while the main thread still shows (the TUI may not list it yet).
    for _ in range(12):
        if on_subagent(codex_tui.screen()):
            break
        codex_tui.run("send-keys", "-t", "codex", "M-Right")
        codex_tui.wait_until(on_subagent, within=5)
    screen = codex_tui.screen()
    assert on_subagent(screen), screen
    assert "You said: “say hi”" in screen and "Report from subagent" not in screen, screen

    codex_tui.submit("hello subagent", then="You said: “hello subagent”")
    async with await daemon.client() as client:
        [conversation] = (await client.request("conversation/list", {}))["conversations"]
        read: Any = await client.request(
            "conversation/subscribe", {"conversationId": conversation["conversationId"]}
        )
        [child] = [s for s in read["snapshot"]["sessions"] if s.get("parentSessionId")]
        page = await client.request(
            "conversation/read",
            {"conversationId": conversation["conversationId"], "sessionId": child["sessionId"]},
        )
    said = [i["text"] for i in page["items"] if i["type"] == "user_message"]
    assert "hello subagent" in said, said

    codex_tui.run("send-keys", "-t", "codex", "M-Left")
    codex_tui.expect("Main [default]")


@pytest.fixture
def planning_daemon(daemon_factory: Callable[..., Daemon]) -> Daemon:
    """A daemon with an agent named `plan`: Codex's plan mode (docs/codex.md)."""
    plan = '\n[agents.plan]\ndescription = "Plans"\nmodel = "demo"\nsandbox = "read-only"\n'
    return daemon_factory(demo_config() + plan)


@pytest.fixture
def planning_codex_tui(planning_daemon: Daemon, tmp_path: Path) -> Iterator[Tmux]:
    with _codex_in_tmux(planning_daemon, tmp_path) as tmux:
        yield tmux


@pytest.mark.timeout(300)
async def test_plan_mode_in_the_codex_tui_is_the_plan_agent(
    planning_codex_tui: Tmux, planning_daemon: Daemon
) -> None:
    tui = planning_codex_tui
    tui.expect("Ask Codex to do anything")
    # Shift+Tab: the next collaboration mode, once the TUI has them (its start-up calls).
    for _ in range(12):
        tui.run("send-keys", "-t", "codex", "BTab")
        if tui.wait_for("Plan mode", within=5) is not None:
            break
    tui.expect("Plan mode")
    tui.submit("plan something", then="You said: “plan something”")
    async with await planning_daemon.client() as client:
        [conversation] = (await client.request("conversation/list", {}))["conversations"]
        assert conversation["agent"] == "plan"


@pytest.mark.timeout(300)
async def test_an_openvaala_client_and_the_codex_tui_share_a_conversation_live(
    asking_codex_tui: Tmux, asking_daemon: Daemon
) -> None:
    """The Codex TUI's conversation, followed by an OpenVaala client: a turn typed in the TUI
    reaches it live, its own message shows in the TUI, and its answer to an approval the TUI
    shows resolves it there."""
    tui = asking_codex_tui
    tui.expect("Ask Codex to do anything")
    tui.submit("first from codex", then="You said: “first from codex”")
    async with await asking_daemon.client() as client:
        [conversation] = (await client.request("conversation/list", {}))["conversations"]
        cid = conversation["conversationId"]
        await client.subscribe(cid)

        tui.submit("second from codex", then="You said: “second from codex”")
        notes = await collect_until(client, turn_ended(), timeout=WAIT_S)
        said = [
            n["params"]["item"].get("text")
            for n in notes
            if n["method"] == "item/completed" and n["params"]["item"]["type"] == "user_message"
        ]
        assert said == ["second from codex"]

        await client.request("input/send", {"conversationId": cid, "text": "from openvaala"})
        tui.expect("You said: “from openvaala”")

        tui.submit("run: echo resolved-elsewhere", then="Would you like to run")
        pending = await collect_until(client, method_is("approval/requested"), timeout=WAIT_S)
        approval = pending[-1]["params"]["approvalId"]
        await client.request(
            "approval/respond",
            {"conversationId": cid, "approvalId": approval, "decision": "allow"},
        )
    # The TUI's question is gone and the command ran.
    assert tui.wait_until(lambda s: "Would you like to run" not in s and "exit code: 0" in s), (
        tui.screen()
    )

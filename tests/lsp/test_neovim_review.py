"""Edit review in headless Neovim against the real daemon (provider faked at the wire): a
write_file approval opens its diff (the file as it is | as it would be) in a tab of its own, `ga`
accepts it (the file is written), `gr` rejects the next one (the file stays as it was)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.lsp.nvim_support import needs_nvim, run_driver
from tests.lsp.scripted_writes import ask_always_config, enqueue_for_root
from tests.support.daemon import Daemon
from tests.support.events import new_conversation


@needs_nvim
async def test_neovim_reviews_a_write_as_a_diff_and_answers_with_keys(
    daemon_factory: Any, fake_openai: FakeProvider, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(config=ask_always_config(fake_openai))
    code = daemon.workdir / "code.py"
    code.write_text("x = 1\n")
    enqueue_for_root(
        fake_openai,
        Reply().tool_call("write_file", {"path": "code.py", "content": "x = 2\n"}),
        Reply().text("changed"),
        Reply().tool_call("write_file", {"path": "code.py", "content": "x = 3\n"}),
        Reply().text("left it"),
    )
    python = await daemon.client("watcher")
    try:
        cid = await new_conversation(python, str(daemon.workdir))
    finally:
        await python.close()
    result, log = await run_driver(daemon, tmp_path, "nvim_review_driver.lua", cid)
    assert "error" not in result, (result, log)

    for key, old, new in (("review1", "x = 1", "x = 2"), ("review2", "x = 2", "x = 3")):
        before, after = result[key]
        # Side by side in diff mode: the file as it is, then as the write would make it.
        assert before["diff"] and after["diff"], key
        assert (before["lines"], after["lines"]) == ([old], [new]), key
        assert "/before/" in before["name"] and before["name"].endswith("code.py"), key
        assert after["filetype"] == "python", key
    assert [t["status"] for t in result["turns"]] == ["completed", "completed"]
    assert result["pending"] == 0
    assert result["user_win_kept"] is True
    # Accepted, then rejected: the second write never happened.
    assert code.read_text() == "x = 2\n"

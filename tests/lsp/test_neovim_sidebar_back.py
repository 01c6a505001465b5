"""The Neovim chat sidebar when the user goes back in its transcript window (<C-o>) to the
conversation shown before: the composer below follows to that conversation (the other's draft
kept), so a message typed there lands in the conversation on screen (read back from the daemon),
not in the one that was shown before. A send the bridge refuses gives its text back without
losing what was typed into the composer while the answer was on its way."""

from __future__ import annotations

from pathlib import Path

from tests.lsp.nvim_support import needs_nvim, run_driver
from tests.lsp.test_neovim_sidebar import _user_texts
from tests.support.daemon import Daemon
from tests.support.events import snapshot_of


@needs_nvim
async def test_the_composer_follows_the_transcript_and_keeps_what_was_typed(
    daemon: Daemon, tmp_path: Path
) -> None:
    result, log = await run_driver(daemon, tmp_path, "nvim_sidebar_back_driver.lua", "")
    assert "error" not in result, (result, log)
    a, b = result["cids"]["a"], result["cids"]["b"]
    assert result["transcript"] == f"openvaala://conversation/{a}"
    assert result["composer"] == f"openvaala-composer://{a}"
    assert result["shown"] == a
    assert result["draft_b"] == ["draft for B"]
    client = await daemon.client("check")
    try:
        assert _user_texts(await snapshot_of(client, a)) == ["typed after going back"]
        assert _user_texts(await snapshot_of(client, b)) == []
    finally:
        await client.close()
    assert result["refused"] == ["the refused message", "", "typed meanwhile"]

"""The Neovim chat sidebar in a headless Neovim against the real daemon (demo model): new,
follow, fork, "Fork here" (its code lens), new again and rewind switch ONE transcript + composer
pair in place, the user's own window is kept, drafts wait per conversation, and a message typed
after "Fork here" lands in the fork (read back from the daemon)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.lsp.nvim_support import needs_nvim, run_driver
from tests.lsp.test_neovim_subagent import CONFIG
from tests.support.daemon import Daemon
from tests.support.events import snapshot_of

DRIVER = "nvim_sidebar_driver.lua"


def _user_texts(snapshot: Any) -> list[str]:
    items = snapshot["sessions"][0]["items"]
    return [i["text"] for i in items if i["type"] == "user_message"]


@needs_nvim
async def test_neovim_sidebar_keeps_one_pair_and_the_drafts(
    daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(config=CONFIG)
    (daemon.workdir / "code.py").write_text("print(1)\n")
    result, log = await run_driver(daemon, tmp_path, DRIVER, "")
    assert "error" not in result, (result, log)
    cids = result["cids"]
    assert len(set(cids.values())) == 5

    def transcript(cid: str) -> str:
        return f"openvaala://conversation/{cid}"

    def composer(cid: str) -> str:
        return f"openvaala-composer://{cid}"

    expected = {
        "new": "a",
        "fork": "b",
        "fork_here": "c",
        "new_again": "d",
        "rewind": "e",
    }
    for step, key in expected.items():
        screen = result[step]
        cid = cids[key]
        # One window pair next to the user's window, on one tab, showing this conversation.
        assert screen["tabs"] == 1, step
        assert sorted(screen["wins"]) == sorted(["code.py", transcript(cid), composer(cid)]), (
            step,
            screen,
        )
        assert screen["code_win"] is True, step
        assert screen["shown"] == cid, step

    # Follow: the subagent's transcript in the same pair, over A's composer and draft.
    follow = result["follow"]
    assert follow["tabs"] == 1 and len(follow["wins"]) == 3 and follow["code_win"] is True
    assert follow["transcript"].startswith(transcript(cids["a"]) + "/session/")
    assert follow["composer"] == composer(cids["a"])
    assert result["follow_composer"] == ["draft for A", "its second line"]

    # Drafts waited where they were left, through every switch.
    assert result["back_to_a"] == ["draft for A", "its second line"]
    assert result["drafts"] == {"a": ["draft for A", "its second line"], "b": ["draft for B"]}
    assert result["rewound_composer"] == ["spawn: say hello"]

    # The message typed after "Fork here" went to the fork, not to the conversation it came from.
    client = await daemon.client("check")
    try:
        in_fork = _user_texts(await snapshot_of(client, cids["c"]))
        in_origin = _user_texts(await snapshot_of(client, cids["a"]))
    finally:
        await client.close()
    assert in_fork[-1] == "typed after Fork here"
    assert "typed after Fork here" not in in_origin

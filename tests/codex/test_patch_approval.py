"""An `apply_patch` waiting for an approval shows Codex clients what it will change: the
`fileChange` item the approval names carries each file's path, kind and unified diff, with the
file's own line numbers (docs/codex.md "Approvals")."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.codex.flows import demo_config, items_of, run_turn, start_thread
from tests.codex.harness import open_client
from tests.support.daemon import Daemon

PATCH = """*** Begin Patch
*** Update File: keep.py
@@
 x7 = 7
-x8 = 8
+x8 = 80
*** Add File: new.txt
+hello
*** Delete File: gone.txt
*** End Patch"""


async def test_the_approval_of_a_patch_shows_its_changes(
    daemon_factory: Callable[..., Daemon],
) -> None:
    daemon = daemon_factory(demo_config(approval="always"))
    lines = [f"x{n} = {n}\n" for n in range(1, 11)]
    (daemon.workdir / "keep.py").write_text("".join(lines))
    (daemon.workdir / "gone.txt").write_text("bye\n")
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        codex.answer = lambda message: {"decision": "accept"}
        call = f"call: apply_patch {json.dumps({'input': PATCH})}"
        _, mark = await run_turn(codex, thread, call)
        asked = [r for r in codex.requests if r["method"] == "item/fileChange/requestApproval"]
        assert asked, codex.requests
        item_id = asked[0]["params"]["itemId"]
        [started] = [i for i in items_of(codex, mark, "item/started", "fileChange")]
        assert started["id"] == item_id
        changes: dict[str, Any] = {c["path"]: c for c in started["changes"]}
        assert set(changes) == {"keep.py", "new.txt", "gone.txt"}
        update = changes["keep.py"]
        assert update["kind"] == {"type": "update", "move_path": None}
        # Applied to the file as it is: the hunk sits at its real lines (5 to 10).
        assert "@@ -5,6 +5,6 @@" in update["diff"], update["diff"]
        assert " x7 = 7\n-x8 = 8\n+x8 = 80\n x9 = 9" in update["diff"]
        assert (
            changes["new.txt"]["kind"] == {"type": "add"} and "+hello" in changes["new.txt"]["diff"]
        )
        assert changes["gone.txt"]["kind"] == {"type": "delete"}
        assert "-bye" in changes["gone.txt"]["diff"]
        # Accepted: the patch applied, and the completed item says the same.
        lines[7] = "x8 = 80\n"
        assert (daemon.workdir / "keep.py").read_text() == "".join(lines)
        [done] = items_of(codex, mark, "item/completed", "fileChange")
        assert done["status"] == "completed" and len(done["changes"]) == 3

        # Declined, the item ends with the changes it proposed, still at the file's lines.
        codex.answer = lambda message: {"decision": "decline"}
        again = PATCH.replace("x8 = 80", "x8 = 81").replace("-x8 = 8", "-x8 = 80")
        again = again.split("*** Add File")[0] + "*** End Patch"
        _, mark = await run_turn(codex, thread, f"call: apply_patch {json.dumps({'input': again})}")
        [declined] = items_of(codex, mark, "item/completed", "fileChange")
        assert declined["status"] == "declined"
        assert "@@ -5,6 +5,6 @@" in declined["changes"][0]["diff"], declined
    finally:
        await codex.close()

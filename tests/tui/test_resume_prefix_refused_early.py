"""`openvaala --resume PREFIX` with a prefix that names several conversations is refused on the
terminal before the TUI takes the screen over (as `exec --resume` is): the real command in a
pseudo-terminal, against a real daemon."""

from __future__ import annotations

import sys
from typing import Any

import pexpect

from tests.support.events import new_conversation, run_turn
from tests.support.twin_ids import add_twin
from tests.tui.conftest import demo_config

ALTERNATE_SCREEN = "\x1b[?1049h"  # what Textual writes first when it takes the screen over


async def test_an_ambiguous_resume_prefix_is_refused_before_the_screen(
    daemon_factory: Any,
) -> None:
    daemon = daemon_factory(demo_config())
    setup = await daemon.client("setup")
    cid = await new_conversation(setup, str(daemon.workdir))
    await run_turn(setup, cid, "hello")
    await setup.close()
    twin = add_twin(daemon, cid)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "openvaala_server", "--resume", cid[:8]],
        env={**daemon.env, "TERM": "xterm-256color"},
        cwd=str(daemon.workdir),
        dimensions=(30, 100),
        timeout=60,
        encoding="utf-8",
        codec_errors="replace",
    )
    try:
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    said = child.before or ""
    assert child.exitstatus == 2, said
    assert ALTERNATE_SCREEN not in said  # the TUI never drew
    flat = " ".join(said.split())
    assert (
        f"openvaala: --resume: conversation id {cid[:8]} is ambiguous" in flat and twin[:12] in flat
    )

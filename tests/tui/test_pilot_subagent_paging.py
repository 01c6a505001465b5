"""A subagent at rest, followed in the terminal UI after a cold open: a snapshot carries none of
its items (docs/protocol.md, "Snapshot"), so the TUI reads its last page when it is shown and
the older ones as the user scrolls up, as for any session (real daemon, real store data)."""

from __future__ import annotations

from typing import Any

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.transcript import FIRST_PAGE, Transcript
from tests.support import subagent_history
from tests.tui.conftest import Clients, demo_config, ready, wait_for
from tests.tui.test_pilot_agents import agent_rows, open_agents


async def test_following_a_closed_subagent_pages_its_history_in(
    daemon_factory: Any, clients: Clients
) -> None:
    daemon = daemon_factory(demo_config(), start=False)
    written = await subagent_history.write(
        daemon.home, daemon.workdir, "demo", closed_items=FIRST_PAGE + 20
    )
    daemon.start()
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client, conversation_id=written.cid)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        assert app.view.sessions[written.closed].items == []  # none in the snapshot
        screen = await open_agents(pilot, app, highlight=1)
        assert "closed one" in agent_rows(screen)[1]
        await pilot.press("f")
        await wait_for(pilot, lambda: app.following == written.closed, what="following")
        transcript = app.query_one(Transcript)
        await wait_for(
            pilot,
            lambda: (
                [w.item.get("text") for w in transcript.item_widgets]
                == written.closed_texts[-FIRST_PAGE:]
            ),
            what="the subagent's last page",
        )
        assert transcript.more_above
        await wait_for(pilot, lambda: transcript.max_scroll_y > 0, what="the layout")
        transcript.scroll_home(animate=False, immediate=True)
        await wait_for(
            pilot,
            lambda: len(transcript.item_widgets) == len(written.closed_texts),
            what="the older page",
        )
        shown = [w.item.get("text") for w in transcript.item_widgets]
        assert shown == written.closed_texts
        assert not transcript.more_above

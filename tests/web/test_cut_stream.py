"""The web UI keeps a reply a crashed daemon was streaming when the resubscription's snapshot
lacks it, marked interrupted, where it was (docs/design.md, "Edit review and crash recovery in
editors"); a first subscription shows the snapshot as it is. The fold runs in the page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced
from tests.web.test_state import page_script

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def test_a_snapshot_after_a_crash_keeps_the_streamed_reply(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    ui = ui_factory(daemon_factory(paced(0)))
    ui.login()
    out: dict[str, Any] = ui.page.evaluate(page_script("cut_stream_check.js"))
    assert out["kept"] == [
        "u1:completed:hi",
        "a1:interrupted:Hello",
        "n1:completed:stopped",
    ]
    assert out["fresh"] == ["u1:completed:hi", "n1:completed:stopped"]
    # A turn that ended in the live daemon while the page was away: no duplicate reply.
    assert out["retried"] == ["u1:completed:hi", "a2:completed:Hello"]

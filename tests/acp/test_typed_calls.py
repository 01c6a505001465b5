"""The ACP agent's daemon calls are checked by method (docs/design.md, "Typed seams"): with the
project's mypy configuration, a call in `openvaala_acp` whose method the protocol does not know
is an error (the deprecated untyped overload), and a known one's result is typed: a key the
result does not have is an error too. One mypy run on a module checked in place of one of the
agent's own (`--shadow-file`)."""

from __future__ import annotations

from pathlib import Path

from tests.support.mypy_probe import errors_in_place_of

PROBE = """
from openvaala_acp.link import DaemonLink


async def calls(link: DaemonLink) -> None:
    listed = await link.request("conversation/list", {"limit": 5})
    cwd: str = listed["conversations"][0]["cwd"]
    await link.request("conversation/lsit", {})  # line 8: no such method
    page = await link.request("conversation/read", {"conversationId": "c", "limit": 5})
    page["nextCursor"]  # line 10: conversation/read pages with hasMore, not a cursor
"""


def test_an_unknown_method_and_a_missing_key_are_errors_in_the_agent(tmp_path: Path) -> None:
    assert errors_in_place_of("openvaala_acp/options.py", PROBE, tmp_path) == [
        (8, True),
        (10, False),
    ]

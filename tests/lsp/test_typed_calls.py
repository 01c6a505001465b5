"""The editor bridge's daemon calls are checked by method (docs/design.md, "Typed seams"): with
the project's mypy configuration, a call in `openvaala_lsp` whose method the protocol does not
know is an error (the deprecated untyped overload), as in the client and the terminal UI. One
mypy run on a module checked in place of one of the bridge's own (`--shadow-file`)."""

from __future__ import annotations

from pathlib import Path

from tests.support.mypy_probe import errors_in_place_of

PROBE = """
from openvaala_lsp.bridge import Bridge


async def calls(bridge: Bridge) -> None:
    listed = await bridge.request("conversation/list", {"archived": True})
    title: str = listed["conversations"][0]["title"]
    await bridge.request("conversation/lsit", {})  # line 8: no such method
"""


def test_an_unknown_method_is_an_error_in_the_bridge(tmp_path: Path) -> None:
    assert errors_in_place_of("openvaala_lsp/edits.py", PROBE, tmp_path) == [(8, True)]

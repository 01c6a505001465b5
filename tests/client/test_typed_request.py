"""What mypy makes of a client's requests and notifications (docs/design.md, "Typed seams"): a
request is checked against its method's params and gives its method's result, a notification
narrows on its method, and a method or params the table does not know is reported. One mypy run
on a small module of calls, as the product's packages are checked (`deprecated` enabled)."""

from __future__ import annotations

from pathlib import Path

from mypy import api

CALLS = """
from openvaala_server.client import Client


async def calls(client: Client) -> None:
    listed = await client.request("conversation/list", {"archived": True})
    title: str = listed["conversations"][0]["title"]
    created = await client.request("conversation/create", {"cwd": "/tmp"})
    cid: str = created["conversation"]["conversationId"]
    await client.request("conversation/list", {"archived": "yes"})  # line 10: wrong type
    await client.request("conversation/lsit", {})  # line 11: no such method
    created["conversations"]  # line 12: not in the result
    note = await client.next_notification()
    if note["method"] == "item/delta":
        delta: str = note["params"]["delta"]
        seq: int = note["params"]["seq"]
    note["params"]["delta"]  # line 17: not every notification has it
"""


def test_requests_and_notifications_are_typed_by_method(tmp_path: Path) -> None:
    module = tmp_path / "calls.py"
    module.write_text(CALLS)
    out, _err, _code = api.run(
        [
            "--strict",
            "--enable-error-code=deprecated",
            "--follow-imports=silent",
            f"--cache-dir={tmp_path / 'cache'}",
            str(module),
        ]
    )
    lines = {int(line.split(":")[1]) for line in out.splitlines() if ": error:" in line}
    assert lines == {10, 11, 12, 17}, out

"""`openvaala --resume ID` takes the short id the lists show, and says so when it names none or
several: the terminal UI's side, on a fake client listing the conversations (no daemon:
tests/tui/fake_client.py). The daemon's side, twins on disk listed by the real daemon:
tests/e2e/test_id_prefix_cli_e2e.py and test_resume_prefix_refused_early.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from openvaala_server.domain.ids import new_id
from openvaala_server.protocol.json_types import JsonObject
from openvaala_tui.app import VaalaApp
from tests.tui.conftest import wait_for

if TYPE_CHECKING:
    from openvaala_server.protocol.payloads import ListResult

from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD, conversation, session, summary


def listing(*active: str, archived: tuple[str, ...] = ()) -> FakeClient:
    """A client whose daemon has these conversations (newest first), on one page each."""

    fake = FakeClient()

    def listed(params: JsonObject) -> ListResult:
        ids = archived if params.get("archived") else active
        return {"conversations": [summary(conversation(cid, new_id())) for cid in ids]}

    fake.answers["conversation/list"] = listed
    for cid in (*active, *archived):  # each one opens: the fake holds it
        fake.conversations[cid] = {
            "conversation": conversation(cid, root := new_id(), persisted=True),
            "sessions": [session(root)],
            "approvals": [],
        }
    return fake


def twin_of(cid: str) -> str:
    """An id sharing `cid`'s first 8 characters (the short id), differing from the ninth on."""
    return cid[:8] + ("0" if cid[8] != "0" else "1") * 24


async def test_resume_takes_a_unique_prefix() -> None:
    cid = new_id()
    fake = listing(new_id(), cid)
    app = VaalaApp(cwd=CWD, client=fake, resume_id=cid[:8])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.view.conversation_id == cid, what="the conversation")
    assert ("conversation/subscribe", {"conversationId": cid}) in fake.requests


async def test_resume_with_an_unknown_prefix_says_so() -> None:
    app = VaalaApp(cwd=CWD, client=listing(new_id()), resume_id="00000000")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.return_code == 2, what="the refusal")
    assert not app.view.conversation_id


async def test_resume_with_an_ambiguous_prefix_names_both(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cid = new_id()
    twin = twin_of(cid)
    # One active, its twin archived: both count.
    app = VaalaApp(cwd=CWD, client=listing(cid, archived=(twin,)), resume_id=cid[:8])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.return_code == 2, what="the refusal")
    assert not app.view.conversation_id
    said = " ".join(capsys.readouterr().err.split())
    assert f"{cid[:8]} is ambiguous" in said and twin[:12] in said

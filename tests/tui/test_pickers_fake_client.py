"""The `/resume` search and the `/tree` picker, on a fake client holding the conversations
(tests/tui/fake_client.py): Enter in the search opens the top result, also after Ctrl+A turned
the archived ones on; the tree shows whole timestamps. What the daemon lists and how it
searches: tests/e2e/ (test_search_snippets_e2e.py, test_tree_e2e.py)."""

from __future__ import annotations

import re

from textual.widgets import Input, OptionList, Switch

from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.protocol.payloads import TreeResult
from openvaala_tui.app import VaalaApp
from openvaala_tui.screens import ListPicker, ResumeScreen
from tests.tui.conftest import ready, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD


async def test_resume_search_enter_opens_the_top_result_also_after_ctrl_a() -> None:
    fake = FakeClient()
    fake.add(CWD, items=("hello",), title="alpha report")
    beta = fake.add(CWD, items=("hello",), title="beta notes", archived=True)
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        app.run_slash("resume", "")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), what="the list")
        screen = app.screen
        search = screen.query_one(Input)
        assert search.has_focus
        await pilot.press("ctrl+a")
        await wait_for(pilot, lambda: screen.query_one(Switch).value, what="archived on")
        assert search.has_focus
        await pilot.press(*"beta")  # typing after Ctrl+A still searches
        assert search.value == "beta"
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: app.view.conversation_id == beta, what="the top result to open"
        )
    asked = fake.params_of("conversation/list")[-1]
    assert asked["archived"] is True and asked.get("search") == "beta"


async def test_tree_shows_whole_timestamps() -> None:
    fake = FakeClient()
    cid = fake.add(CWD, items=("hello",), title="tree root")

    def tree(params: JsonObject) -> TreeResult:
        info = fake.info(str(params["conversationId"]))
        node = {
            key: info[key]
            for key in ("conversationId", "title", "createdAt", "updatedAt", "archived", "status")
        }
        root = {**node, "kind": "root", "parentId": None, "branchPoint": None}
        return {
            "conversationId": cid,
            "root": {**root, "parentMissing": False, "children": []},  # type: ignore[typeddict-item]
        }

    fake.answers["conversation/tree"] = tree
    app = VaalaApp(cwd=CWD, client=fake, conversation_id=cid)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        app.run_slash("tree", "")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="the tree")
        options = app.screen.query_one(OptionList)
        label = str(options.get_option_at_index(0).prompt)
        assert re.search(r"· \d{4}-\d\d-\d\d \d\d:\d\d$", label), label
        assert "…" not in label
        await pilot.press("escape")

"""A tool block or a reasoning block whose parts are already gone (the transcript is being taken
down: a conversation switch, a rewind, the app quitting) takes a late update quietly: an
exception there would end the app's note pump, and with it the app."""

from __future__ import annotations

from typing import Any, cast

from textual.app import App, ComposeResult

from openvaala_server.client.view import Item
from openvaala_tui.widgets.items import ItemWidget, Reasoning, ToolBlock


def item(**fields: Any) -> Item:
    return cast("Item", fields)


CALL = item(
    **{
        "type": "tool_call",
        "itemId": "c1",
        "callId": "k1",
        "name": "shell",
        "arguments": {"command": "ls"},
        "status": "in_progress",
    }
)
RESULT = item(
    **{**CALL, "type": "tool_result", "itemId": "r1", "output": "a\n", "status": "completed"}
)
THOUGHT = item(type="reasoning", itemId="t1", text="hm", status="done")


class Holder(App[None]):
    def __init__(self, block: ItemWidget) -> None:
        super().__init__()
        self.block = block

    def compose(self) -> ComposeResult:
        yield self.block


async def test_a_tool_block_being_taken_down_takes_its_result_quietly() -> None:
    block = ToolBlock(CALL)
    app = Holder(block)
    async with app.run_test() as pilot:
        await block.remove_children()
        await block.complete(RESULT)
        block.attach_result(RESULT)
        await pilot.pause()
        assert block.status == "done"  # the state is kept; only the drawing is skipped


async def test_a_reasoning_block_being_taken_down_takes_its_end_quietly() -> None:
    block = Reasoning(item(**{**THOUGHT, "status": "in_progress"}))
    app = Holder(block)
    async with app.run_test() as pilot:
        await block.remove_children()
        await block.complete(THOUGHT)
        block._draw_stream()
        await pilot.pause()
        assert block.item["status"] == "done"

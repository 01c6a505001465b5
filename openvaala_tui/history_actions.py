"""Checkpoints and the conversation tree in the terminal UI: `/rewind` (asking whether to restore
the files too), `/undo`, `/tree`, `/continue` (docs/protocol.md: conversation/rewind with
`restoreFiles`, conversation/undo, conversation/tree, turn/resume)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from openvaala_server.client import RpcError
from openvaala_server.client.restore_note import (
    FilesSince,
    files_since,
    missing_note,
    paths_text,
    result_skipped,
    skipped_note,
)
from openvaala_server.protocol import methods
from openvaala_tui import format as fmt
from openvaala_tui.actions import CommandsMixin
from openvaala_tui.screens import ConfirmScreen, ListPicker

if TYPE_CHECKING:
    from openvaala_server.domain.tree import TreeNode
    from openvaala_server.protocol.payloads import RewindParams


def tree_lines(node: TreeNode, current: str, depth: int = 0) -> list[tuple[str, str]]:
    """(conversation id, label) of every node, depth first, indented, the current one marked."""
    mark = "● " if node["conversationId"] == current else "  "
    how = {"fork": " · fork", "rewind": " · rewind"}.get(str(node.get("kind")), "")
    gone = " · its parent is not here" if node.get("parentMissing") else ""
    label = f"{'   ' * depth}{'└ ' if depth else ''}{mark}{node.get('title') or '(untitled)'}"
    label += f"{how}{gone} · {fmt.local_time(str(node.get('updatedAt') or ''))}"
    lines = [(str(node["conversationId"]), label)]
    for child in node.get("children") or []:
        lines += tree_lines(child, current, depth + 1)
    return lines


NOTHING_TO_CONTINUE = (
    "Nothing to continue: the last turn was not cut short by a daemon stop "
    "(/continue resumes a turn a crash or a kill interrupted)."
)


T = TypeVar("T")


class HistoryMixin(CommandsMixin):
    async def _files_since(self, message_id: str) -> FilesSince:
        """The files that turns from this message on changed and that could be restored, and
        those too large to have been kept."""
        root = self.view.root
        report = await self.call(methods.CONVERSATION_CHECKPOINTS, {"conversationId": self.cid})
        return files_since(root.items if root else [], message_id, report)

    async def _with_conflicts(self, restore: Callable[[bool], Awaitable[T]]) -> T | None:
        """Call a restoring method (`restore(force)`); on `files_conflict`, ask before
        overwriting (None: no)."""
        try:
            return await restore(False)
        except RpcError as exc:
            if exc.kind != "files_conflict":
                raise
            conflicts = exc.data.get("conflicts")
            listed = conflicts if isinstance(conflicts, list) else []
            paths = [str(c.get("path")) for c in listed if isinstance(c, dict)]
            sure = await self.push_screen_wait(
                ConfirmScreen(
                    f"Changed since the agent wrote them: {paths_text(paths)}. Overwrite them too?"
                )
            )
            if not sure:
                await self.local_notice("Nothing was restored: your changes are kept.")
                return None
            return await restore(True)

    async def cmd_rewind(self, arg: str) -> None:
        root = self.view.root
        messages = root.user_messages() if root else []
        choices = [
            (str(m["itemId"]), fmt.first_line(str(m.get("text") or ""), 100)) for m in messages
        ]
        chosen = await self.push_screen_wait(
            ListPicker("Rewind to before which message?", choices, empty="No message yet.")
        )
        if not chosen:
            return
        params: RewindParams = {"conversationId": self.cid, "messageId": chosen}
        since = await self._files_since(chosen)
        if since.paths or since.skipped:
            question = (
                f"Also restore the files the agent changed since then? {paths_text(since.paths)}"
                if since.paths
                else "Also restore the files the agent changed since then?"
            )
            if note := skipped_note(since.skipped):
                question += f" ({note})"
            if await self.push_screen_wait(ConfirmScreen(question)):
                params["restoreFiles"] = True
        before = self.view.title
        label = dict(choices).get(chosen, "")
        result = await self._with_conflicts(
            lambda force: self.call(methods.CONVERSATION_REWIND, {**params, "force": force})
        )
        if result is None:
            return
        created = result["conversation"]
        await self.open_conversation(
            str(created["conversationId"]),
            composer_text=str(result.get("composerText") or ""),
        )
        files = result.get("files")
        restored = files["restored"] if files else []
        files_note = f" Files restored: {paths_text(restored)}." if restored else ""
        if missing := missing_note(files):
            files_note += f" {missing}"
        if left := skipped_note(result_skipped(files)):
            files_note += f" {left}"
        await self.local_notice(
            f"Rewound: this is a new conversation, “{created.get('title')}”, with what came "
            f"before “{label}”; that message is back in the composer. “{before}” is unchanged "
            f"(/resume or /tree opens it).{files_note}"
        )

    async def cmd_undo(self, arg: str) -> None:
        try:
            result = await self._with_conflicts(
                lambda force: self.call(
                    methods.CONVERSATION_UNDO, {"conversationId": self.cid, "force": force}
                )
            )
        except RpcError as exc:
            if exc.kind != "not_found":
                raise
            await self.local_notice("Nothing to undo: no turn changed files that are not restored.")
            return
        if result is not None:
            restored = result.get("restored") or []
            done = f"({paths_text(restored)})" if restored else "(nothing was put back on disk)"
            notes = [n for n in (missing_note(result), skipped_note(result_skipped(result))) if n]
            await self.local_notice(
                f"Undone: the last turn's file changes {done}. "
                "The conversation is unchanged; /undo again goes one turn further back."
                + "".join(f" {n}" for n in notes)
            )

    async def cmd_tree(self, arg: str) -> None:
        result = await self.call(methods.CONVERSATION_TREE, {"conversationId": self.cid})
        choices = tree_lines(result["root"], self.cid)
        chosen = await self.push_screen_wait(
            ListPicker(
                "Forks and rewinds of this conversation: open which?", choices, current=self.cid
            )
        )
        if chosen and chosen != self.cid:
            await self.open_conversation(chosen)

    async def cmd_continue(self, arg: str) -> None:
        """Resume a turn a daemon stop cut short; with none, one sentence says so (not the
        generic "something is still running" of `not_idle`)."""
        try:
            await self.call(
                methods.TURN_RESUME, {"conversationId": self.cid, **self._session_param()}
            )
        except RpcError as exc:
            if exc.kind == "not_idle":
                await self.local_notice(NOTHING_TO_CONTINUE)
            elif exc.kind == "turn_running":
                await self.local_notice("A turn is running: there is nothing to continue.")
            else:
                raise

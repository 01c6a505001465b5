"""Checkpoints, the conversation tree, resuming and bundles for editors (docs/editors.md).

Every editor gets the questions a rewind asks through `window/showMessageRequest` ("restore the
files too?", then "overwrite the files you changed?"), as approvals do, so no plugin is needed;
a caller that passes `restoreFiles` / `force` is not asked. The other actions are daemon requests
passed through (`conversation/undo`, `conversation/tree`, `turn/resume`, `conversation/export`,
`conversation/import`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Literal, TypeVar, cast

from lsprotocol import types

from openvaala_lsp import uris
from openvaala_lsp.bridge import Bridge, DaemonError
from openvaala_lsp.host import Host
from openvaala_lsp.params import Params, optional, required, session_params
from openvaala_lsp.replies import Cancelled, Imported, TreeNode, TreeReply
from openvaala_server.client.restore_note import (
    FilesSince,
    files_since,
    missing_note,
    paths_text,
    result_skipped,
    skipped_note,
)
from openvaala_server.domain import tree
from openvaala_server.protocol import methods, payloads

R = TypeVar("R")
OnConflict = Literal["ask", "keep-both", "skip"]

RESTORE, KEEP = "Restore files", "Keep files as they are"
OVERWRITE, CANCEL = "Overwrite them", "Cancel"


class HistoryActions:
    ls: Host

    @property
    def bridge(self) -> Bridge:
        return self.ls.bridge

    async def default_cwd(self) -> str:
        raise NotImplementedError  # actions.Actions: the workspace's root

    async def _ask(self, message: str, yes: str, no: str) -> bool:
        answer = await self.ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=message,
                actions=[types.MessageActionItem(title=yes), types.MessageActionItem(title=no)],
            )
        )
        return answer is not None and answer.title == yes

    async def files_since(self, cid: str, message_id: str) -> FilesSince:
        """The files turns from this message on changed, not restored yet, and those too large
        to have been kept."""
        read = await self.bridge.request(methods.CONVERSATION_READ, {"conversationId": cid})
        items = read["items"]
        report = await self.bridge.request(
            methods.CONVERSATION_CHECKPOINTS, {"conversationId": cid}
        )
        return files_since(items, message_id, report)

    async def rewind_files(self, call: payloads.RewindParams, params: Params, ask: bool) -> None:
        """Set `restoreFiles` / `force` in a rewind's call: as given, else asked when `ask`."""
        if isinstance(restore := params.get("restoreFiles"), bool):
            call["restoreFiles"] = restore
        if isinstance(force := params.get("force"), bool):
            call["force"] = force
        if "restoreFiles" in call or not ask:
            return
        since = await self.files_since(call["conversationId"], call["messageId"])
        if since.paths or since.skipped:
            listed = paths_text(since.paths)
            question = f"OpenVaala: also restore the files the agent changed since? {listed}"
            if note := skipped_note(since.skipped):
                question = f"{question.rstrip()} ({note})"
            call["restoreFiles"] = await self._ask(question, RESTORE, KEEP)

    async def with_conflicts(
        self, send: Callable[[bool], Awaitable[R]], forced: bool, ask: bool
    ) -> R | None:
        """The request (`send(force)`); on `files_conflict` (and `ask`) the user decides whether
        to overwrite. None: they did not."""
        try:
            return await send(False)
        except DaemonError as exc:
            data = exc.data if isinstance(exc.data, dict) else {}
            if not ask or data.get("kind") != "files_conflict" or forced:
                raise
            conflicts = data.get("conflicts") or []
            paths = [str(c.get("path")) for c in conflicts if isinstance(c, dict)]
            question = f"OpenVaala: changed since the agent wrote them: {paths_text(paths)}."
            if not await self._ask(question + " Overwrite them?", OVERWRITE, CANCEL):
                return None
            return await send(True)

    async def undo(
        self, params: Params, *, show: bool = False
    ) -> payloads.RestoreResult | Cancelled:
        call: payloads.UndoParams = {"conversationId": required(params, "conversationId")}
        if isinstance(force := params.get("force"), bool):
            call["force"] = force

        def send(force: bool) -> Awaitable[payloads.RestoreResult]:
            forced: payloads.UndoParams = {**call, "force": True} if force else call
            return self.bridge.request(methods.CONVERSATION_UNDO, forced)

        result = await self.with_conflicts(send, call.get("force", False), ask=show)
        if result is None:
            return {"cancelled": True}
        if show:
            restored = result.get("restored") or []
            done = f" ({paths_text(restored)})" if restored else " (nothing was put back on disk)"
            self.tell_restore(f"OpenVaala: undone the last turn's file changes{done}.", result)
        return result

    def tell_restore(self, text: str, files: Mapping[str, object] | None) -> None:
        """Say what a restore did — an editor without a plugin shows no command result — and,
        as a warning, which turns' files it could not put back (`missingTurnIds`) and which
        files were too large to keep (`skipped`)."""
        notes = [n for n in (missing_note(files), skipped_note(result_skipped(files))) if n]
        kind = types.MessageType.Warning if notes else types.MessageType.Info
        message = " ".join([text, *notes])
        self.ls.window_show_message(types.ShowMessageParams(type=kind, message=message))

    async def tree(self, params: Params) -> TreeReply:
        cid = required(params, "conversationId")
        result = await self.bridge.request(methods.CONVERSATION_TREE, {"conversationId": cid})
        # The editor's tree: the daemon's nodes, each with the `uri` the editor opens it with.
        return {"conversationId": result["conversationId"], "root": _with_uris(result["root"])}

    async def resume(self, params: Params) -> payloads.ResumeResult:
        return await self.bridge.request(methods.TURN_RESUME, session_params(params))

    async def checkpoints(self, params: Params) -> payloads.CheckpointsResult:
        cid = required(params, "conversationId")
        return await self.bridge.request(methods.CONVERSATION_CHECKPOINTS, {"conversationId": cid})

    async def export_bundle(self, params: Params) -> payloads.ExportResult:
        call: payloads.ExportParams = {
            "conversationId": required(params, "conversationId"),
            "path": required(params, "path"),
        }
        return await self.bridge.request(methods.CONVERSATION_EXPORT, call)

    async def import_bundle(self, params: Params) -> Imported:
        # The workspace's directory unless the command names one: an import never works in the
        # directory its bundle names (docs/security.md, "Checkpoints and bundles").
        call: payloads.ImportParams = {
            "path": required(params, "path"),
            "cwd": optional(params, "cwd") or await self.default_cwd(),
        }
        if (on_conflict := optional(params, "onConflict")) is not None:
            # As the editor sent it: the daemon names a value it does not take.
            call["onConflict"] = cast(OnConflict, on_conflict)
        imported = await self.bridge.request(methods.CONVERSATION_IMPORT, call)
        if cid := imported.get("conversationId"):
            return {**imported, "uri": uris.conversation_uri(cid)}
        return cast(Imported, imported)  # nothing imported: no document to name


def _with_uris(node: tree.TreeNode) -> TreeNode:
    return {
        **node,
        "uri": uris.conversation_uri(node["conversationId"]),
        "children": [_with_uris(child) for child in node["children"]],
    }

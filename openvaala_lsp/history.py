"""Checkpoints, the conversation tree, resuming and bundles for editors (docs/editors.md).

Every editor gets the questions a rewind asks through `window/showMessageRequest` ("restore the
files too?", then "overwrite the files you changed?"), as approvals do, so no plugin is needed;
a caller that passes `restoreFiles` / `force` is not asked. The other actions are daemon requests
passed through (`conversation/undo`, `conversation/tree`, `turn/resume`, `conversation/export`,
`conversation/import`)."""

from __future__ import annotations

from typing import Any, cast

from lsprotocol import types

from openvaala_lsp import uris
from openvaala_lsp.bridge import Bridge, DaemonError
from openvaala_lsp.host import Host
from openvaala_lsp.params import Params, optional, required, session_params
from openvaala_server.client.restore_note import (
    FilesSince,
    files_since,
    missing_note,
    paths_text,
    result_skipped,
    skipped_note,
)
from openvaala_server.protocol import methods

RESTORE, KEEP = "Restore files", "Keep files as they are"
OVERWRITE, CANCEL = "Overwrite them", "Cancel"


class HistoryActions:
    ls: Host

    @property
    def bridge(self) -> Bridge:
        return self.ls.bridge

    def default_cwd(self) -> str:
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

    async def rewind_files(self, call: dict[str, Any], params: Params, ask: bool) -> None:
        """Set `restoreFiles` / `force` in a rewind's call: as given, else asked when `ask`."""
        for key in ("restoreFiles", "force"):
            if isinstance(params.get(key), bool):
                call[key] = params[key]
        if "restoreFiles" in call or not ask:
            return
        since = await self.files_since(call["conversationId"], call["messageId"])
        if since.paths or since.skipped:
            listed = paths_text(since.paths)
            question = f"OpenVaala: also restore the files the agent changed since? {listed}"
            if note := skipped_note(since.skipped):
                question = f"{question.rstrip()} ({note})"
            call["restoreFiles"] = await self._ask(question, RESTORE, KEEP)

    async def with_conflicts(self, method: str, call: dict[str, Any], ask: bool) -> Any | None:
        """The request; on `files_conflict` (and `ask`) the user decides whether to overwrite.
        None: they did not."""
        try:
            return await self.bridge.request(method, call)
        except DaemonError as exc:
            data = exc.data if isinstance(exc.data, dict) else {}
            if not ask or data.get("kind") != "files_conflict" or call.get("force"):
                raise
            paths = [str(c.get("path")) for c in data.get("conflicts") or []]
            question = f"OpenVaala: changed since the agent wrote them: {paths_text(paths)}."
            if not await self._ask(question + " Overwrite them?", OVERWRITE, CANCEL):
                return None
            return await self.bridge.request(method, {**call, "force": True})

    async def undo(self, params: Params, *, show: bool = False) -> Any:
        call: dict[str, Any] = {"conversationId": required(params, "conversationId")}
        if isinstance(params.get("force"), bool):
            call["force"] = params["force"]
        result = await self.with_conflicts(methods.CONVERSATION_UNDO, call, ask=show)
        if result is None:
            return {"cancelled": True}
        if show:
            restored = result.get("restored") or []
            done = f" ({paths_text(restored)})" if restored else " (nothing was put back on disk)"
            self.tell_restore(f"OpenVaala: undone the last turn's file changes{done}.", result)
        return result

    def tell_restore(self, text: str, files: dict[str, Any] | None) -> None:
        """Say what a restore did — an editor without a plugin shows no command result — and,
        as a warning, which turns' files it could not put back (`missingTurnIds`) and which
        files were too large to keep (`skipped`)."""
        notes = [n for n in (missing_note(files), skipped_note(result_skipped(files))) if n]
        kind = types.MessageType.Warning if notes else types.MessageType.Info
        message = " ".join([text, *notes])
        self.ls.window_show_message(types.ShowMessageParams(type=kind, message=message))

    async def tree(self, params: Params) -> Any:
        cid = required(params, "conversationId")
        result = await self.bridge.request(methods.CONVERSATION_TREE, {"conversationId": cid})
        # The editor's tree: the daemon's nodes, each with a `uri` added.
        stack = [cast("dict[str, Any]", result["root"])]
        while stack:  # each node gets the uri the editor opens it with
            node = stack.pop()
            node["uri"] = uris.conversation_uri(node["conversationId"])
            stack.extend(node.get("children") or [])
        return result

    async def resume(self, params: Params) -> Any:
        return await self.bridge.request(methods.TURN_RESUME, session_params(params))

    async def checkpoints(self, params: Params) -> Any:
        cid = required(params, "conversationId")
        return await self.bridge.request(methods.CONVERSATION_CHECKPOINTS, {"conversationId": cid})

    async def export_bundle(self, params: Params) -> Any:
        call = {
            "conversationId": required(params, "conversationId"),
            "path": required(params, "path"),
        }
        return await self.bridge.request(methods.CONVERSATION_EXPORT, call)

    async def import_bundle(self, params: Params) -> Any:
        # The workspace's directory unless the command names one: an import never works in the
        # directory its bundle names (docs/security.md, "Checkpoints and bundles").
        call: dict[str, Any] = {
            "path": required(params, "path"),
            "cwd": optional(params, "cwd") or self.default_cwd(),
        }
        if (on_conflict := optional(params, "onConflict")) is not None:
            call["onConflict"] = on_conflict
        result = await self.bridge.request(methods.CONVERSATION_IMPORT, call)
        if result.get("conversationId"):
            result["uri"] = uris.conversation_uri(result["conversationId"])
        return result

"""The editor's files for the agent's file tools (docs/editors.md, "Agent Client Protocol").

When the editor offers `fs.readTextFile` and `fs.writeTextFile`, each session's conversation is
hosted by this agent (`files/host`): the daemon then asks it for each file its file tools read
or write (`files/requested`), and it answers with what the editor's `fs/read_text_file` and
`fs/write_text_file` did (`files/respond`) — unsaved buffers read, edits made in them. Approvals
and checkpoints stay the daemon's (docs/design.md, "Files held by an editor")."""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from acp import RequestError
from acp.interfaces import Client

from openvaala_acp.link import DaemonLink
from openvaala_server.protocol import methods
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.structured import Supervisor

log = logging.getLogger(__name__)

RESOURCE_NOT_FOUND = -32002  # ACP's error for a file the editor does not have


def offers_files(capabilities: Any) -> bool:
    fs = getattr(capabilities, "fs", None)
    return bool(fs is not None and fs.read_text_file and fs.write_text_file)


class EditorFiles:
    def __init__(self, link: DaemonLink, tasks: Supervisor) -> None:
        self.link = link
        self.tasks = tasks
        self.conn: Client | None = None
        self.enabled = False  # the editor offered both fs methods (initialize)
        self.hosted: set[str] = set()  # conversation ids this agent hosts

    async def host(self, conversation_id: str) -> None:
        if not self.enabled:
            return
        await self.link.request(methods.FILES_HOST, {"conversationId": conversation_id})
        self.hosted.add(conversation_id)

    def reconnected(self) -> None:
        """A new daemon connection hosts nothing: ask again for every session."""
        for cid in list(self.hosted):
            self.tasks.spawn(partial(self.host, cid), f"acp-host-{cid}")

    def requested(self, params: JsonObject) -> None:
        request_id = str(params.get("requestId"))
        self.tasks.spawn(partial(self._serve, params), f"acp-file-{request_id}")

    async def _serve(self, params: JsonObject) -> None:
        answer: dict[str, object] = {"requestId": params.get("requestId")}
        session_id, path = str(params.get("conversationId")), str(params.get("path"))
        try:
            if self.conn is None:
                raise RequestError(-32603, "the editor is not connected")
            if params.get("op") == "write":
                await self.conn.write_text_file(
                    session_id=session_id, path=path, content=str(params.get("text") or "")
                )
            else:
                read = await self.conn.read_text_file(session_id=session_id, path=path)
                answer["text"] = read.content
        except RequestError as exc:
            if exc.code == RESOURCE_NOT_FOUND and params.get("op") == "read":
                answer["text"] = None
            else:
                answer["error"] = f"the editor answered: {exc}"
        except Exception as exc:  # the editor's connection broke: the daemon must hear of it
            answer["error"] = f"the editor could not be asked: {exc}"
        try:
            await self.link.request(methods.FILES_RESPOND, answer)
        except RequestError as exc:  # timed out on the daemon's side, or the daemon went away
            log.warning("a file answer was not taken: %s", exc)

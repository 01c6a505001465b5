"""The live conversation list (docs/protocol.md, `conversation/watchList`): clients that asked are
told at once when a saved conversation appears, changes (title, status, archived, model…) or is
deleted, so a sidebar needs no polling. No `seq`: a client that reconnects lists again."""

from __future__ import annotations

from typing import Final

from openvaala_server.protocol import methods
from openvaala_server.protocol import payloads as wire
from openvaala_server.runtime.broadcast import Broadcast

METHOD: Final = methods.CONVERSATION_LIST_CHANGED


class ListFeed(Broadcast):
    def changed(self, info: wire.ConversationInfo) -> None:
        # An unsaved conversation (no message yet) is not listed, so nobody hears of it.
        if self._clients and info["persisted"]:  # nobody watching: nothing to encode
            self.publish(METHOD, {"conversation": info})

    def deleted(self, conversation_id: str) -> None:
        if self._clients:
            self.publish(METHOD, {"conversationId": conversation_id, "deleted": True})

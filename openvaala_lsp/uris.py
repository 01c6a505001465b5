"""The read-only virtual documents: `openvaala://conversation/<id>` for a conversation (its root
agent) and `openvaala://conversation/<id>/session/<sessionId>` for one subagent."""

from __future__ import annotations

import re
from dataclasses import dataclass

SCHEME = "openvaala"
_ID = r"[0-9a-f]{32}"
_URI = re.compile(rf"^{SCHEME}://conversation/(?P<cid>{_ID})(?:/session/(?P<sid>{_ID}))?/?$")


@dataclass(frozen=True)
class DocRef:
    conversation_id: str
    session_id: str | None = None  # None: the root agent

    @property
    def uri(self) -> str:
        return conversation_uri(self.conversation_id, self.session_id)


def conversation_uri(conversation_id: str, session_id: str | None = None) -> str:
    base = f"{SCHEME}://conversation/{conversation_id}"
    return f"{base}/session/{session_id}" if session_id else base


def parse(uri: str) -> DocRef | None:
    match = _URI.match(uri)
    if match is None:
        return None
    return DocRef(match["cid"], match["sid"])

"""The wire shapes of files held by an editor (docs/protocol.md, "files/host"): the client
that hosts a conversation's files is asked to read or write one and answers by `requestId`."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict


class FilesHostParams(TypedDict):
    conversationId: str


class FilesHostResult(TypedDict):
    hosted: bool


class FilesRequestedNote(TypedDict):
    requestId: str
    conversationId: str
    op: Literal["read", "write"]
    path: str  # absolute, inside the conversation's working directory
    text: NotRequired[str]  # a write's new content


class FilesRespondParams(TypedDict):
    requestId: str
    text: NotRequired[str | None]  # a read's text; null: the file does not exist
    error: NotRequired[str]  # why the editor could not do it


class FilesRespondResult(TypedDict):
    accepted: bool

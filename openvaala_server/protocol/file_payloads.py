"""The wire shapes of files held by an editor (docs/protocol.md, "files/host"): the client
that hosts a conversation's files is asked to read or write one and answers by `requestId`."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from openvaala_server.protocol.json_types import JsonValue


class FilesHostParams(TypedDict):
    conversationId: str
    terminal: NotRequired[bool]  # it runs the shell tool's commands too
    files: NotRequired[bool]  # false: commands only, the files stay on disk


class FilesHostResult(TypedDict):
    hosted: bool


class FilesRequestedNote(TypedDict):
    requestId: str
    conversationId: str
    op: Literal["read", "write", "run", "cancel"]
    path: NotRequired[str]  # read, write: absolute, inside the conversation's working directory
    text: NotRequired[str]  # a write's new content
    argv: NotRequired[list[str]]  # run: the command line, sandbox included
    cwd: NotRequired[str]
    env: NotRequired[dict[str, str]]
    timeoutS: NotRequired[float]  # run: kill it past this
    callId: NotRequired[str]  # run: the tool call it is for


class FilesRespondParams(TypedDict):
    requestId: str
    text: NotRequired[str | None]  # a read's text; null: the file does not exist
    error: NotRequired[str]  # why the editor could not do it
    output: NotRequired[str]  # run: what the command printed
    exitCode: NotRequired[int | None]
    signal: NotRequired[str | None]
    timedOut: NotRequired[bool]
    truncated: NotRequired[bool]


class FilesRespondResult(TypedDict):
    accepted: bool


class FilesOutputParams(TypedDict):
    requestId: str  # a `run` still going
    output: str  # what the command printed since the last files/output (not all of it)


class SetMcpServersParams(TypedDict):
    conversationId: str
    servers: dict[str, JsonValue]  # name → a `[mcp_servers.NAME]` table (docs/configuration.md)

"""Driving `openvaala lsp` in a subprocess with pytest-lsp's client, impersonating a recorded
editor (its client capabilities), against a real daemon from `tests.support.daemon`."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities, make_test_lsp_client

from tests.support.daemon import Daemon
from tests.support.waits import WAIT_S

EDITORS = ["neovim", "visual-studio-code"]

# A demo model slow enough to interrupt, and one that answers at once.
PACED_CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 15

[agents.default]
description = "General assistant"
model = "demo"
"""


def plain(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


@dataclass
class Recorder:
    """What the bridge pushed to the editor."""

    events: list[dict[str, Any]] = field(default_factory=list)
    usage: list[dict[str, Any]] = field(default_factory=list)
    refreshed: list[str] = field(default_factory=list)  # uris (textDocumentContent/refresh)
    fallback_refreshed: list[str] = field(default_factory=list)  # uris ($/openvaala/refresh)
    composer: list[dict[str, Any]] = field(default_factory=list)
    connection: list[str] = field(default_factory=list)
    connection_params: list[dict[str, Any]] = field(default_factory=list)  # each in full
    approvals_requested: list[dict[str, Any]] = field(default_factory=list)
    approvals_resolved: list[dict[str, Any]] = field(default_factory=list)
    mcp_status: list[dict[str, Any]] = field(default_factory=list)  # $/openvaala/mcpStatus
    # window/showMessageRequest: each prompt and the future the test answers it with.
    prompts: list[tuple[types.ShowMessageRequestParams, asyncio.Future[Any]]] = field(
        default_factory=list
    )
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def poke(self) -> None:
        self.changed.set()

    async def until(self, check: Callable[[], Any], timeout: float = WAIT_S) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            result = check()
            if result:
                return result
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                methods = [e["method"] for e in self.events[-15:]]
                raise AssertionError(f"timed out; last events: {methods}")
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(remaining, 0.2))

    def methods(self, cid: str) -> list[str]:
        return [e["method"] for e in self.events if e["conversationId"] == cid]


def capabilities(editor: str, *, text_document_content: bool = False) -> types.ClientCapabilities:
    caps = client_capabilities(editor)
    if text_document_content:  # LSP 3.18 (VS Code 1.96+): newer than the recorded profile
        workspace = caps.workspace or types.WorkspaceClientCapabilities()
        workspace.text_document_content = types.TextDocumentContentClientCapabilities()
        caps.workspace = workspace
    return caps


F = TypeVar("F", bound=Callable[..., Any])


def typed_feature(client: LanguageClient) -> Callable[[str], Callable[[F], F]]:
    """pygls's `feature` decorator, typed: it registers the handler and returns it unchanged."""
    return cast(Callable[[str], Callable[[F], F]], client.feature)


async def start_lsp(
    daemon: Daemon,
    caps: types.ClientCapabilities,
    root: str | None = None,
    options: Any = None,
) -> tuple[LanguageClient, Recorder, types.InitializeResult]:
    """`options`: the editor's initializationOptions."""
    client = make_test_lsp_client()
    rec = Recorder()
    feature = typed_feature(client)

    @feature("$/openvaala/event")
    def on_event(params: Any) -> None:
        rec.events.append(plain(params))
        rec.poke()

    @feature("$/openvaala/usage")
    def on_usage(params: Any) -> None:
        rec.usage.append(plain(params))
        rec.poke()

    @feature("$/openvaala/refresh")
    def on_refresh(params: Any) -> None:
        rec.fallback_refreshed.append(plain(params)["uri"])
        rec.poke()

    @feature("$/openvaala/composer")
    def on_composer(params: Any) -> None:
        rec.composer.append(plain(params))
        rec.poke()

    @feature("$/openvaala/connection")
    def on_connection(params: Any) -> None:
        rec.connection.append(plain(params)["state"])
        rec.connection_params.append(plain(params))
        rec.poke()

    @feature("$/openvaala/approvalRequested")
    def on_approval_requested(params: Any) -> None:
        rec.approvals_requested.append(plain(params))
        rec.poke()

    @feature("$/openvaala/approvalResolved")
    def on_approval_resolved(params: Any) -> None:
        rec.approvals_resolved.append(plain(params))
        rec.poke()

    @feature("$/openvaala/mcpStatus")
    def on_mcp_status(params: Any) -> None:
        rec.mcp_status.append(plain(params))
        rec.poke()

    @feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def on_prompt(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        answer: asyncio.Future[types.MessageActionItem | None] = (
            asyncio.get_running_loop().create_future()
        )
        rec.prompts.append((params, answer))
        rec.poke()
        return await answer

    @feature(types.WORKSPACE_TEXT_DOCUMENT_CONTENT_REFRESH)
    def on_content_refresh(params: types.TextDocumentContentRefreshParams) -> None:
        rec.refreshed.append(params.uri)
        rec.poke()

    @feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def on_lens_refresh(params: None) -> None:
        rec.poke()

    await client.start_io(sys.executable, "-m", "openvaala_server", "lsp", env=daemon.env)
    root = root or str(daemon.workdir)
    try:
        result = await client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                root_uri=f"file://{root}",
                workspace_folders=[types.WorkspaceFolder(uri=f"file://{root}", name="work")],
                initialization_options=options,
            )
        )
    except BaseException:
        await client.stop()  # the caller never gets the client: do not leave the bridge running
        raise
    return client, rec, result


async def stop_lsp(client: LanguageClient) -> None:
    """Shut the session down, and stop the client and its bridge process even if that fails."""
    try:
        await client.shutdown_session()
    finally:
        await client.stop()


async def request(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return plain(await client.protocol.send_request_async(method, params))


async def command(client: LanguageClient, name: str, *arguments: Any) -> Any:
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=list(arguments))
    )
    return plain(result)

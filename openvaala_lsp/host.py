"""What the editor bridge's feature modules use of the language server that owns them.

The server (server.py) imports every feature module to build itself; a feature naming the server
class back, even under `if TYPE_CHECKING:`, would close an import cycle (docs/design.md
"Untangled runtime"). So the features annotate with `Host`, a protocol spelling out the server's
methods and attributes they call, and the server satisfies it structurally: mypy checks it where
the server passes itself to each feature. This module is a leaf: it names no feature module, only
what each feature offers the others, as smaller protocols.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import Any, Literal, Protocol, TypeVar

from lsprotocol import types
from pygls.progress import Progress
from pygls.workspace import Workspace

from openvaala_lsp.bridge import Bridge
from openvaala_lsp.params import Params
from openvaala_lsp.replies import Content
from openvaala_server.protocol import payloads
from openvaala_server.protocol.json_types import JsonObject

F = TypeVar("F", bound=Callable[..., Any])

# How a transcript document reaches the editor: `workspace/textDocumentContent`, or the
# `openvaala/render` fallback (documents.py).
Mode = Literal["content", "fallback"]


class Notifier(Protocol):
    """The server's JSON-RPC side: notifications to the editor."""

    def notify(self, method: str, params: Any | None = None) -> None: ...


class Subscriptions(Protocol):
    """The conversations the editor subscribed to (events.Forwarder)."""

    @property
    def conversations(self) -> set[str]: ...

    def forget(self, cid: str) -> None: ...

    def push_all_usage(self, cid: str) -> None: ...


class Transcripts(Protocol):
    """The read-only transcript documents (documents.Documents)."""

    @property
    def known(self) -> Collection[str]: ...

    async def content(self, uri: str, mode: Mode, since: int | None = None) -> Content: ...

    async def lenses(self, uri: str) -> list[types.CodeLens]: ...

    def opened(self, uri: str) -> None: ...

    def closed(self, uri: str) -> None: ...


class Answers(Protocol):
    """Pending approvals and answering them (approvals.Approvals)."""

    async def respond(self, params: Params) -> payloads.RespondResult: ...

    def pending(self, cid: str | None = None) -> list[JsonObject]: ...


class Progresses(Protocol):
    """Work-done progress per running turn (progress.TurnProgress)."""

    def cancel(self, token: str | int) -> None: ...


class Host(Protocol):
    """The language server as its feature modules see it (server.OpenVaalaServer)."""

    # -- OpenVaala's own parts -------------------------------------------------------------

    @property
    def bridge(self) -> Bridge: ...

    @property
    def forwarder(self) -> Subscriptions: ...

    @property
    def documents(self) -> Transcripts: ...

    @property
    def approvals(self) -> Answers: ...

    @property
    def turn_progress(self) -> Progresses: ...

    @property
    def actions(self) -> object:
        """The editor actions (actions.Actions), looked up by name by requests and commands."""
        ...

    def background(self, run: Callable[[], Awaitable[object]], name: str) -> None: ...

    # -- pygls's LanguageServer ------------------------------------------------------------

    @property
    def protocol(self) -> Notifier: ...

    @property
    def client_capabilities(self) -> types.ClientCapabilities: ...

    @property
    def workspace(self) -> Workspace: ...

    @property
    def work_done_progress(self) -> Progress: ...

    def feature(self, feature_name: str, options: Any | None = None) -> Callable[[F], F]: ...

    def command(self, command_name: str) -> Callable[[F], F]: ...

    def window_show_message(self, params: types.ShowMessageParams) -> None: ...

    async def window_show_message_request_async(
        self, params: types.ShowMessageRequestParams
    ) -> types.MessageActionItem | None: ...

    async def window_show_document_async(
        self, params: types.ShowDocumentParams
    ) -> types.ShowDocumentResult: ...

    async def workspace_text_document_content_refresh_async(
        self, params: types.TextDocumentContentRefreshParams
    ) -> None: ...

    async def workspace_code_lens_refresh_async(self, params: None) -> None: ...

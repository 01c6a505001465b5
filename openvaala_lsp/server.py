"""`openvaala lsp`: the language server over stdio."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
from collections.abc import Awaitable, Callable, Generator
from typing import Any, cast

from lsprotocol import types
from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol.language_server import lsp_method

from openvaala_lsp import commands, context, documents, progress, requests, uris
from openvaala_lsp.actions import Actions
from openvaala_lsp.approvals import Approvals, ask_mode
from openvaala_lsp.bridge import Bridge
from openvaala_lsp.config_status import ConfigStatus
from openvaala_lsp.documents import Documents
from openvaala_lsp.events import Forwarder
from openvaala_lsp.progress import TurnProgress
from openvaala_lsp.version import __version__
from openvaala_lsp.wire import WireProtocol, quiet_pygls

log = logging.getLogger(__name__)


class OpenVaalaProtocol(WireProtocol):
    """Adds what pygls does not advertise by itself: `workspace.textDocumentContent` (LSP 3.18),
    only for editors that can use it."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        server = cast("OpenVaalaServer", self._server)
        options = params.initialization_options
        server.approvals.mode, server.option_warning = ask_mode(options)
        if isinstance(options, dict) and options.get("progress") is False:
            server.turn_progress.wanted = False  # the editor shows turns its own way
        workspace = params.capabilities.workspace
        if workspace is not None and workspace.text_document_content is not None:
            options = result.capabilities.workspace or types.WorkspaceOptions()
            options.text_document_content = types.TextDocumentContentOptions(schemes=[uris.SCHEME])
            result.capabilities.workspace = options
        return result


class OpenVaalaServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("openvaala", __version__, protocol_cls=OpenVaalaProtocol)
        self.bridge = Bridge()
        self.forwarder = Forwarder(self)
        self.documents = Documents(self)
        self.turn_progress = TurnProgress(self)
        self.actions = Actions(self)
        self.approvals = Approvals(self)
        self.config_status = ConfigStatus(self)
        self.option_warning: str | None = None  # bad initializationOptions, shown once
        self._background: set[asyncio.Task[None]] = set()
        self.bridge.listeners += [
            self.forwarder.on_note,
            self.documents.on_note,
            self.turn_progress.on_note,
            self.approvals.on_note,
            self.config_status.on_note,
        ]
        self.bridge.view_listeners.append(self.approvals.sync)

    def report_server_error(self, error: Exception, source: Any) -> None:
        if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
            cast(OpenVaalaProtocol, self.protocol).parse_error(error)
            return
        super().report_server_error(error, source)

    def background(self, run: Callable[[], Awaitable[object]], name: str) -> None:
        """Run `run()` in the background: an activity of the bridge's supervisor while the
        server runs (`serve_io`), so it ends with the server; else (a server not served over
        stdio) a task kept until it ends."""
        if self.bridge.tasks.running:
            self.bridge.tasks.spawn(run, name)
            return

        async def body() -> None:
            await run()

        task = asyncio.create_task(body(), name=name)
        self._background.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._background.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.warning("background work failed: %s", exc)


def build() -> OpenVaalaServer:
    ls = OpenVaalaServer()
    requests.register(ls)
    commands.register(ls)
    context.register(ls)
    documents.register(ls)
    progress.register(ls)

    @ls.feature(types.INITIALIZED)
    async def initialized(ls: OpenVaalaServer, params: types.InitializedParams) -> None:
        if ls.option_warning is not None:
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning, message=f"OpenVaala: {ls.option_warning}"
                )
            )
        # Connect (starting the daemon if needed) now, so the first action is quick.
        try:
            client = await ls.bridge.client()
            ls.config_status.show_if_broken(client.server_info.get("config"))
        except Exception as exc:  # shown, not fatal: every action retries
            ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=str(exc))
            )

    @ls.feature(types.SHUTDOWN)
    async def shutdown(ls: OpenVaalaServer, params: None) -> None:
        await ls.turn_progress.close()
        await ls.bridge.close()

    return ls


def main() -> int:
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="openvaala-lsp %(levelname)s %(message)s"
    )
    quiet_pygls()
    serve_io(build())
    return 0


def serve_io(ls: OpenVaalaServer) -> None:
    """pygls's `start_io`, with the bridge's supervisor entered around the server's life, so
    that everything the bridge starts ends with it (docs/design.md, "Structured concurrency")."""
    stop = ls._stop_event = threading.Event()  # what pygls's `exit` handler sets
    reader = StdinAsyncReader(sys.stdin.buffer, ls.thread_pool)
    ls.protocol.set_writer(StdoutWriter(sys.stdout.buffer))

    async def run() -> None:
        async with ls.bridge.tasks:
            await run_async(
                stop_event=stop,
                reader=reader,
                protocol=ls.protocol,
                # pygls's own logger, as its `start_io` passes: `quiet_pygls` drops its
                # traceback for invalid JSON, which `report_server_error` answers as one line.
                logger=logging.getLogger("pygls.server"),
                error_handler=ls.report_server_error,
            )

    try:
        asyncio.run(run())
    except BrokenPipeError:
        log.error("the editor closed the connection; stopping")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        ls.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated

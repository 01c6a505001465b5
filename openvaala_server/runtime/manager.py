"""The conversation manager: every conversation the server owns, and the operations clients ask
for (it was called `Runtime`; the package `runtime/` is the manager and the parts it is built of).

Handlers in `api/` call these methods; they validate what only the runtime can know (is a turn
running, does the working directory exist, is the model configured) and raise `errors.*`. Each
operation lives in the module of its responsibility (docs/design.md "Runtime split by
responsibility"); this class holds the daemon-wide state and names them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from openvaala_server import errors
from openvaala_server.config import Config, ModelConfig
from openvaala_server.mcp.manager import LISTINGS_FILE, McpManager
from openvaala_server.models.base import Provider
from openvaala_server.models.registry import make_provider
from openvaala_server.protocol import methods
from openvaala_server.runtime import (
    branching,
    early,
    lifecycle,
    listing,
    manual_compaction,
    reading,
    session_rules,
    settings,
)
from openvaala_server.runtime import (
    providers as provider_pool,
)
from openvaala_server.runtime.broadcast import Broadcast
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.file_hosts import FileHosts
from openvaala_server.runtime.inputs import Inputs
from openvaala_server.runtime.list_feed import ListFeed
from openvaala_server.runtime.providers import ProviderPool
from openvaala_server.runtime.session import LiveSession, LiveTurn
from openvaala_server.runtime.session_mcp import SessionServers
from openvaala_server.runtime.subagents import SubagentService
from openvaala_server.structured import Activity, Supervisor

if TYPE_CHECKING:
    from openvaala_server.domain import records as r
    from openvaala_server.domain.approvals import Answer
    from openvaala_server.domain.images import Image
    from openvaala_server.domain.inbox import Input, Mode
    from openvaala_server.domain.permissions import Confinement, Permissions
    from openvaala_server.domain.status import StopReason
    from openvaala_server.protocol import payloads as p
    from openvaala_server.runtime.ports import Conversation
    from openvaala_server.runtime.reload import ConfigWatcher
    from openvaala_server.store.interface import ConversationStore
    from openvaala_server.tools.base import Tool

log = logging.getLogger(__name__)
T = TypeVar("T")


class ConversationManager:
    """Owns the loaded conversations and implements the services their parts use
    (`runtime/ports.Services`)."""

    def __init__(
        self,
        config: Config,
        store: ConversationStore,
        *,
        providers: Callable[[ModelConfig], Provider] = make_provider,
    ) -> None:
        self.config = config
        self.store = store
        self.conversations: dict[str, LiveConversation] = {}
        self.providers = ProviderPool(providers)
        self._open_locks: dict[str, anyio.Lock] = {}
        self.inputs = Inputs(self)
        self.shutting_down = False
        # Owns turns and MCP servers; entered by the server for the daemon's life (server.py).
        self.tasks = Supervisor("runtime")
        self.subagents = SubagentService(self)
        # MCP servers, started when a turn of an agent naming them first needs them, shared.
        self.mcp = McpManager(config.mcp_servers, self.tasks, store.data_dir.root / LISTINGS_FILE)
        # Daemon-wide notifications (config/reloaded, config/error), and the config file's state.
        self.broadcast = Broadcast()
        self.mcp.on_status = partial(self.broadcast.publish, methods.MCP_STATUS_CHANGED)
        self.list_feed = ListFeed()  # conversation/listChanged to whoever watches the list
        self.file_hosts = FileHosts()  # editors that hold conversations' files (files/host)
        self.session_mcp = SessionServers(self.tasks)  # MCP servers a client brought for one
        self.config_watch: ConfigWatcher | None = None

    # -- services used by the loop -------------------------------------------------------

    async def store_call(self, call: Awaitable[T]) -> T:
        """Run a store operation; an I/O failure becomes a clear `storage_failed` error."""
        try:
            return await call
        except errors.OpenVaalaError:
            raise
        except Exception as exc:
            failure = errors.storage_failure(exc)
            if failure is None:
                raise
            log.error("%s", failure.message)
            raise failure from None

    def config_for(self, session: LiveSession) -> Config:
        """The configuration `session` runs with: its running turn's, else the current one."""
        turn = session.turn
        return turn.config if turn is not None and turn.config is not None else self.config

    def model_config(self, name: str, config: Config | None = None) -> ModelConfig:
        return provider_pool.model_config(config or self.config, name)

    def require_agent(self, name: str, config: Config | None = None) -> None:
        provider_pool.require_agent(config or self.config, name)

    def provider(self, name: str, config: Config | None = None) -> Provider:
        """The provider of model `name` as `config` (default: the current one) defines it."""
        model = self.model_config(name, config)
        return self.providers.get(name, model, self.config.models.get(name))

    def kept_providers(self) -> list[Provider]:
        """Every provider kept for later calls: a release (runtime/warmup.py `forget`) clears
        what each holds of a history, not only the one of the session's current model."""
        return self.providers.kept()

    def retire_stale_providers(self) -> None:
        """After a reload: providers whose model changed or went away release their connections."""
        self.providers.retire_stale(self.config)

    def tools_for(self, conv: Conversation, session: LiveSession) -> dict[str, Tool]:
        return session_rules.tools_for(self, conv, session)

    def permissions_for(self, conv: Conversation, session: LiveSession) -> Permissions:
        return session_rules.permissions_for(self, conv, session)

    def own_permissions_for(self, conv: Conversation, session: LiveSession) -> Permissions:
        return session_rules.own_permissions_for(self, conv, session)

    def confinement_for(self, conv: Conversation, session: LiveSession) -> Confinement:
        return session_rules.confinement_for(self, conv, session)

    # -- conversations (runtime/lifecycle.py, settings.py, listing.py) -----------------------

    def create(
        self, cwd: str, agent: str | None, model: str | None, title: str | None
    ) -> LiveConversation:
        return lifecycle.create(self, cwd, agent, model, title)

    async def open(self, cid: str) -> LiveConversation:
        conv = self.conversations.get(cid)
        if conv is not None:
            return conv
        lock = self._open_locks.setdefault(cid, anyio.Lock())
        async with lock:
            conv = self.conversations.get(cid)
            if conv is None:
                conv = await lifecycle.load(self, cid)
                self.conversations[cid] = conv
                lifecycle.evict_idle(self, keep=cid)
        self._open_locks.pop(cid, None)
        return conv

    async def recover_cut_turns(self) -> None:
        await lifecycle.recover_cut_turns(self)

    async def list_conversations(
        self, archived: bool, search: str | None, limit: int, cursor: str | None
    ) -> p.ListResult:
        return await listing.list_conversations(self, archived, search, limit, cursor)

    async def rename(self, cid: str, title: str) -> None:
        await settings.rename(self, cid, title)

    async def set_archived(self, cid: str, archived: bool) -> None:
        await settings.set_archived(self, cid, archived)

    async def delete(self, cid: str) -> None:
        await lifecycle.delete(self, cid)

    async def set_model(self, cid: str, sid: str | None, model: str) -> None:
        await settings.set_model(self, cid, sid, model)

    async def set_agent(self, cid: str, agent: str) -> None:
        await settings.set_agent(self, cid, agent)

    async def set_cwd(self, cid: str, cwd: str) -> None:
        await settings.set_cwd(self, cid, cwd)

    # -- history (runtime/branching.py, reading.py, manual_compaction.py) --------------------

    async def adopt(
        self, created: dict[str, Any], items: list[r.Item], *, images_from: str | None = None
    ) -> LiveConversation:
        return await branching.adopt(self, created, items, images_from=images_from)

    async def fork(self, cid: str, up_to_item_id: str | None) -> p.ConversationResult:
        return await branching.fork(self, cid, up_to_item_id)

    async def rewind(
        self, cid: str, message_id: str, restore_files: bool = False, force: bool = False
    ) -> p.RewindResult:
        return await branching.rewind(self, cid, message_id, restore_files, force)

    async def undo_files(self, cid: str, force: bool) -> p.RestoreResult:
        return await branching.undo_files(self, cid, force)

    async def read(self, cid: str, sid: str | None, before: str | None, limit: int) -> p.ReadResult:
        return await reading.read(self, cid, sid, before, limit)

    async def compact_now(self, cid: str) -> p.CompactResult:
        return await manual_compaction.compact_now(self, cid)

    # -- input and turns (runtime/inputs.py) -------------------------------------------------

    async def persist_first(self, conv: LiveConversation, text: str) -> None:
        await self.inputs.persist_first(conv, text)

    async def send_input(
        self,
        cid: str,
        sid: str | None,
        text: str,
        mode: Mode,
        origin: str = "user",
        from_session_id: str | None = None,
        *,
        images: list[Image] | None = None,
    ) -> p.SendResult:
        return await self.inputs.send(cid, sid, text, mode, origin, from_session_id, images=images)

    def start_turn(
        self,
        conv: LiveConversation,
        session: LiveSession,
        inputs: list[Input],
        *,
        by_request: bool = False,
    ) -> LiveTurn:
        return self.inputs.start_turn(conv, session, inputs, by_request=by_request)

    def interrupt_session(
        self, conv: Conversation, session: LiveSession, reason: StopReason
    ) -> bool:
        return self.inputs.interrupt_session(conv, session, reason)

    async def interrupt(self, cid: str, sid: str | None) -> p.InterruptResult:
        conv = await self.open(cid)
        session = conv.session(sid)
        return {"interrupted": self.interrupt_session(conv, session, "user")}

    def on_turn_ended(
        self,
        conv: Conversation,
        session: LiveSession,
        status: str,
        error: r.ErrorInfo | None,
    ) -> None:
        self.inputs.on_turn_ended(conv, session, status, error)

    def return_inputs(self, conv: Conversation, session: LiveSession, inputs: list[Input]) -> None:
        self.inputs.return_inputs(conv, session, inputs)

    def drop_waiting_inputs(self, session: LiveSession) -> None:
        self.inputs.drop_waiting(session)

    def edit_input(self, input_id: str, text: str) -> None:
        self.inputs.edit(input_id, text)

    def withdraw_input(self, input_id: str) -> p.WithdrawResult:
        return self.inputs.withdraw(input_id)

    def steer_input(self, input_id: str) -> None:
        self.inputs.steer(input_id)

    def jump_input(self, input_id: str) -> None:
        self.inputs.jump(input_id)

    # -- approvals -----------------------------------------------------------------------

    async def respond_approval(
        self, cid: str, approval_id: str, decision: Answer, message: str | None
    ) -> p.RespondResult:
        """An answer to `approval/requested` from any client; the first one wins."""
        conv = await self.open(cid)
        return conv.approvals.resolve(approval_id, decision, message or None)

    # -- lifecycle -----------------------------------------------------------------------

    async def shutdown(self, timeout: float = 10.0) -> None:
        """Stop every running turn (kept as interrupted) and wait until it is all on disk."""
        self.shutting_down = True
        tasks: list[Activity] = []
        for conv in self.conversations.values():
            for session in conv.sessions.values():
                early.cancel(session)
                if session.turn is not None and session.turn.task is not None:
                    tasks.append(session.turn.task)
                    self.interrupt_session(conv, session, "shutdown")
        with anyio.move_on_after(timeout):
            for task in tasks:
                await task.wait()
        await self.mcp.shutdown()
        await self.session_mcp.shutdown()
        await self.providers.aclose()

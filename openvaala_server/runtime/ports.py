"""The narrow interfaces the runtime's parts see of each other (docs/design.md "Untangled runtime").

`ConversationManager` (runtime/manager.py) owns the loaded conversations and implements
`Services`; a loaded conversation (`LiveConversation`, runtime/conversation.py) implements
`Conversation`. The modules a conversation is built from (approvals, checkpoints, context_view)
and those the manager is built from (history, images, reload, subagents, turn, compaction) name
these protocols instead of the classes that own them, so no module imports its owner and the
import graph has no cycle (docs/design.md "Import contracts"). This module imports only leaves.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from openvaala_server.config import Config, ModelConfig
    from openvaala_server.domain.approvals import Grant
    from openvaala_server.domain.inbox import Input, Mode
    from openvaala_server.domain.meta import ConversationMeta
    from openvaala_server.domain.permission_mode import PermissionMode
    from openvaala_server.domain.permissions import Confinement, Permissions
    from openvaala_server.domain.plan import Plan
    from openvaala_server.domain.records import ErrorInfo, Item, MetadataPayload, Record
    from openvaala_server.domain.status import StopReason
    from openvaala_server.mcp.manager import McpManager
    from openvaala_server.models.base import Provider
    from openvaala_server.protocol.payloads import SendResult
    from openvaala_server.runtime.broadcast import Broadcast
    from openvaala_server.runtime.file_hosts import FileHosts
    from openvaala_server.runtime.hub import Hub
    from openvaala_server.runtime.list_feed import ListFeed
    from openvaala_server.runtime.session import LiveSession
    from openvaala_server.store.interface import ConversationStore
    from openvaala_server.structured import Supervisor
    from openvaala_server.tools.base import Tool

T = TypeVar("T")


class Storage(Protocol):
    """The store, and the call that turns its I/O failures into `storage_failed`."""

    store: ConversationStore  # the daemon's Store; unit tests run on an in-memory one

    async def store_call(self, call: Awaitable[T]) -> T: ...


class Models(Protocol):
    """The configuration in force and the providers of its models (runtime/providers.py)."""

    config: Config

    def config_for(self, session: LiveSession) -> Config: ...

    def model_config(self, name: str, config: Config | None = None) -> ModelConfig: ...

    def require_agent(self, name: str, config: Config | None = None) -> None: ...

    def provider(self, name: str, config: Config | None = None) -> Provider: ...

    def kept_providers(self) -> list[Provider]: ...

    def retire_stale_providers(self) -> None: ...


class Rules(Protocol):
    """What a session's calls may do: its tools, permissions and confinement
    (runtime/session_rules.py)."""

    def permissions_for(self, conv: Conversation, session: LiveSession) -> Permissions: ...

    def own_permissions_for(self, conv: Conversation, session: LiveSession) -> Permissions: ...

    def confinement_for(self, conv: Conversation, session: LiveSession) -> Confinement: ...

    def tools_for(self, conv: Conversation, session: LiveSession) -> dict[str, Tool]: ...


class Turns(Protocol):
    """Inputs and the turns they start (runtime/inputs.py)."""

    shutting_down: bool
    tasks: Supervisor  # owns turns, subagent reports and MCP servers (structured.py)

    def drop_waiting_inputs(self, session: LiveSession) -> None: ...

    def interrupt_session(
        self, conv: Conversation, session: LiveSession, reason: StopReason
    ) -> bool: ...

    def on_turn_ended(
        self,
        conv: Conversation,
        session: LiveSession,
        status: str,
        error: ErrorInfo | None,
    ) -> None: ...

    def return_inputs(
        self, conv: Conversation, session: LiveSession, inputs: list[Input]
    ) -> None: ...

    async def send_input(
        self,
        cid: str,
        sid: str | None,
        text: str,
        mode: Mode,
        origin: str = "user",
        from_session_id: str | None = None,
    ) -> SendResult: ...


class Services(Storage, Models, Rules, Turns, Protocol):
    """Everything a conversation reaches of the conversation manager; a part that needs less
    names the narrower protocol above (docs/design.md "Runtime split by responsibility")."""

    mcp: McpManager
    broadcast: Broadcast
    list_feed: ListFeed
    file_hosts: FileHosts  # editors that hold conversations' files


class Conversation(Protocol):
    """What the parts a conversation is built from use of it."""

    @property
    def runtime(self) -> Services: ...

    @property
    def conversation_id(self) -> str: ...

    @property
    def hub(self) -> Hub: ...

    @property
    def meta(self) -> ConversationMeta | None: ...

    @property
    def sessions(self) -> dict[str, LiveSession]: ...

    @property
    def root_session_id(self) -> str: ...

    @property
    def root(self) -> LiveSession: ...

    @property
    def cwd(self) -> str: ...

    @property
    def grants(self) -> list[Grant]: ...

    @property
    def permission_mode(self) -> PermissionMode | None: ...

    async def append_meta(self, *payloads: MetadataPayload) -> list[Record]: ...

    async def grant(self, session: LiveSession, grants: list[Grant]) -> None: ...

    async def ensure_history(self) -> None: ...

    async def ensure_context(self) -> None: ...

    async def persist_items(
        self,
        session: LiveSession,
        items: list[Item],
        *,
        count_in_usage: bool = True,
        publish_usage: bool = True,
    ) -> None: ...

    async def set_plan(self, session: LiveSession, plan: Plan) -> None: ...

    def make_session(
        self,
        session_id: str,
        parent_session_id: str | None,
        agent: str,
        model: str,
        title: str,
        depth: int,
    ) -> LiveSession: ...

    async def load_surroundings(self, session: LiveSession) -> None: ...

    def renew_surroundings(self, session: LiveSession) -> None: ...

    def instructions_for(self, session: LiveSession) -> str: ...

    def refresh_usage_estimate(self, session: LiveSession) -> None: ...

    def publish_usage(self, session: LiveSession) -> None: ...

    def publish_session(self, session: LiveSession) -> None: ...

    def publish_updated(self) -> None: ...

    def publish_inbox(self, session: LiveSession) -> None: ...

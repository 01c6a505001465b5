"""A real ACP client, built from the same `agent-client-protocol` package as the agent, driving
`openvaala acp` in a subprocess against a daemon from `tests.support.daemon`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, spawn_agent_process
from acp.core import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ClientCapabilities,
    Implementation,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UserMessageChunk,
)

from tests.acp.acp_schema import SchemaCheck
from tests.fakes.providers import FakeProvider
from tests.support.daemon import Daemon
from tests.support.waits import WAIT_S

# Every shell command asks first.
ASKING_CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
approval = "always"
"""


def fake_config(fake: FakeProvider) -> str:
    """A daemon whose default agent talks to a provider faked at the wire (tests/fakes)."""
    return fake.config_toml("fake") + '\n[agents.default]\ndescription = "d"\nmodel = "fake"\n'


@dataclass
class Recorder:
    """What the agent sent: every session/update, and the permission questions, each with the
    future the test answers it through."""

    updates: list[tuple[str, Any]] = field(default_factory=list)
    questions: list[tuple[str, ToolCallUpdate, asyncio.Future[RequestPermissionResponse]]] = field(
        default_factory=list
    )
    # The options offered with each question, in the same order.
    options: list[list[PermissionOption]] = field(default_factory=list)
    stamps: list[float] = field(default_factory=list)  # perf_counter at each update's arrival
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    # -- the ACP Client interface the connection calls --
    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.stamps.append(time.perf_counter())
        self.updates.append((session_id, update))
        self.changed.set()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kw: Any
    ) -> RequestPermissionResponse:
        answer: asyncio.Future[RequestPermissionResponse] = (
            asyncio.get_running_loop().create_future()
        )
        self.questions.append((session_id, tool_call, answer))
        self.options.append(options)
        self.changed.set()
        return await answer

    def on_connect(self, conn: Any) -> None:
        pass

    # -- reading it --
    def of(self, session_id: str, kind: type | tuple[type, ...] | None = None) -> list[Any]:
        return [
            u for s, u in self.updates if s == session_id and (kind is None or isinstance(u, kind))
        ]

    def text(self, session_id: str) -> str:
        return "".join(u.content.text for u in self.of(session_id, AgentMessageChunk))

    def thoughts(self, session_id: str) -> str:
        return "".join(u.content.text for u in self.of(session_id, AgentThoughtChunk))

    def user_texts(self, session_id: str) -> list[str]:
        return [u.content.text for u in self.of(session_id, UserMessageChunk)]

    def tool_calls(self, session_id: str) -> list[ToolCallStart]:
        return self.of(session_id, ToolCallStart)

    def tool_updates(self, session_id: str, call_id: str) -> list[ToolCallProgress]:
        return [u for u in self.of(session_id, ToolCallProgress) if u.tool_call_id == call_id]

    async def until(self, check: Callable[[], Any], timeout: float = WAIT_S) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            result = check()
            if result:
                return result
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                kinds = [type(u).__name__ for _, u in self.updates[-12:]]
                raise AssertionError(f"timed out; last updates: {kinds}")
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(remaining, 0.2))


@contextlib.asynccontextmanager
async def acp_agent(
    daemon: Daemon,
    log_dir: Path,
    *,
    rec: Recorder | None = None,
    capabilities: ClientCapabilities | None = None,
    schema: SchemaCheck | None = None,
) -> AsyncIterator[tuple[ClientSideConnection, Recorder]]:
    """`openvaala acp` started by a real ACP client (`rec`, offering `capabilities`) and
    initialized; `schema` sees every message both ways."""
    rec = rec or Recorder()
    # The agent's log goes to a file: an undrained pipe could block it.
    stderr = os.open(log_dir / "acp-stderr.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        async with spawn_agent_process(
            # The recorder answers what the agent calls; the SDK's Protocol lists every method.
            cast(Client, rec),
            sys.executable,
            "-m",
            "openvaala_server",
            "acp",
            env=daemon.env,
            # The SDK waits 2 s for the agent to exit once its stdin closes, then terminates
            # it: under CI's load an exit took longer, and one that came in between was a
            # ProcessLookupError from the SDK's terminate(), failing a test that had passed.
            transport_kwargs={"stderr": stderr, "shutdown_timeout": WAIT_S},
            observers=[schema] if schema is not None else None,
        ) as (conn, _process):
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=capabilities or ClientCapabilities(),
                client_info=Implementation(name="pytest", version="1"),
            )
            yield conn, rec
    finally:
        os.close(stderr)

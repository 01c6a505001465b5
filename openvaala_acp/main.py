"""`openvaala acp`: run the agent over stdio until the editor closes it. Logs go to stderr
(stdout carries the protocol)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from typing import cast

from acp import Agent, run_agent

from openvaala_acp.agent import OpenVaalaAgent
from openvaala_server.structured import Supervisor


async def serve() -> None:
    # The agent's own activities (its outbox's sender, permission questions) are this
    # supervisor's: nothing outlives the agent (docs/design.md, "Structured concurrency").
    async with Supervisor("acp") as tasks:
        agent = OpenVaalaAgent(tasks=tasks)
        try:
            # The router finds handlers by name; what is not implemented answers
            # method_not_found.
            await run_agent(cast(Agent, agent))
        finally:
            await agent.close()


def main() -> int:
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="openvaala-acp %(levelname)s %(message)s"
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
    return 0

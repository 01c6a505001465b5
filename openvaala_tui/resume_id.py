"""`openvaala --resume PREFIX`: the prefix made a full id before the screen is taken over, so an
ambiguous, unknown or malformed one is refused on the terminal as `exec` refuses it, without the
TUI flashing up first (docs/design.md, "Short ids")."""

from __future__ import annotations

import asyncio

from openvaala_server.domain.short_ids import FULL_ID, normalize


def full_resume_id(typed: str) -> str:
    """The full id `typed` names; IdPrefixError when it names none or several. A full id costs no
    connection; with no daemon to ask, the prefix is returned and the TUI says why it cannot
    reach one."""
    prefix = normalize(typed)
    if len(prefix) == FULL_ID:
        return prefix
    return asyncio.run(_resolve(prefix))


async def _resolve(prefix: str) -> str:
    from openvaala_server.client import Client, ConnectionLost, RpcError
    from openvaala_server.client.conversation_ids import resolve

    try:
        client = await Client.connect(client_name="openvaala-tui", reconnect=False)
    except Exception:  # as the TUI's own connect: it then says why, with its advice
        return prefix
    try:
        return await resolve(client, prefix)
    except (RpcError, ConnectionLost):
        return prefix  # the TUI meets the same failure and shows it
    finally:
        await client.close()

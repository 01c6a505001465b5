"""`openvaala list`: the conversations, newest first, with the short ids every command takes."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from openvaala_server.domain.short_ids import short_ids

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from openvaala_server.protocol.payloads import ConversationSummary


def add_command(commands: Any) -> None:
    parser = commands.add_parser(
        "list", help="list conversations: short id, title, directory, last update, state"
    )
    parser.add_argument("--json", action="store_true", help="print them as a JSON array")
    parser.add_argument("--all", action="store_true", help="archived conversations too")
    parser.add_argument("--search", metavar="TEXT", help="only those whose text matches TEXT")
    parser.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")


def run(args: argparse.Namespace) -> int:
    import asyncio

    from openvaala_server.client import ConnectionLost, RpcError

    if args.limit < 1:
        print("openvaala: --limit must be 1 or more", file=sys.stderr)
        return 2
    try:
        rows = asyncio.run(_rows(args))
    except RpcError as exc:
        print(f"openvaala: {exc.message}", file=sys.stderr)
        return 2 if exc.kind == "invalid_params" else 1
    except (RuntimeError, OSError, ConnectionLost) as exc:
        print(f"openvaala: cannot reach the daemon: {exc}", file=sys.stderr)
        return 4
    if args.json:
        from openvaala_server.protocol import codec  # not on every command's way (exec's spawn)

        shown = short_ids(row["conversationId"] for row in rows)
        print(
            codec.text(
                [{**row, "shortId": shown[row["conversationId"]]} for row in rows], ascii=True
            )
        )
    else:
        print(table(rows), end="")
    return 0


async def _rows(args: argparse.Namespace) -> list[ConversationSummary]:
    from openvaala_server.client import Client
    from openvaala_server.client.conversation_ids import conversations

    rows: list[ConversationSummary] = []
    async with await Client.connect(client_name="openvaala-list", reconnect=False) as client:
        for archived in (False, True) if args.all else (False,):
            rows += [
                row
                async for row in conversations(
                    client, archived=archived, search=args.search, limit=args.limit
                )
            ]
    rows.sort(key=lambda row: str(row.get("updatedAt") or ""), reverse=True)
    return rows[: args.limit]


def table(rows: Sequence[Mapping[str, object]]) -> str:
    """The rows as aligned columns (pure: tested without a daemon)."""
    if not rows:
        return "no conversations\n"
    home = os.path.expanduser("~")
    shown = short_ids(str(row["conversationId"]) for row in rows)
    lines = []
    for row in rows:
        cwd = str(row.get("cwd") or "")
        if cwd == home or cwd.startswith(home + os.sep):
            cwd = "~" + cwd[len(home) :]
        status = str(row.get("status") or "idle") + (" (archived)" if row.get("archived") else "")
        title = " ".join(str(row.get("title") or "(untitled)").split())
        if len(title) > 40:
            title = title[:39] + "…"
        updated = str(row.get("updatedAt") or "")[:16].replace("T", " ")
        lines.append((shown[str(row["conversationId"])], updated, status, title, cwd))
    header = ("ID", "UPDATED (UTC)", "STATE", "TITLE", "DIRECTORY")
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(4)]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line[:4], widths, strict=True))
        + "  "
        + line[4]
        + "\n"
        for line in [header, *lines]
    )

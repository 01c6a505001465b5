"""`openvaala export` and `openvaala import`: bundles of conversations through the daemon.

The daemon reads and writes the files (it owns the data directory); these commands only name
them. docs/storage.md, "Export and import".
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from openvaala_server.import_report import report_import
from openvaala_server.protocol import methods

COMMANDS = ("export", "import", "move")


def add_commands(commands: Any) -> None:
    export = commands.add_parser(
        "export", help="write a conversation, its ancestors and attachments to one bundle file"
    )
    export.add_argument("id", help="the conversation id (or a unique prefix of 6+ characters)")
    export.add_argument(
        "-o", "--output", help="the bundle file (default: ID.openvaala.tar; `-`: stdout)"
    )
    imp = commands.add_parser("import", help="import a bundle made by `openvaala export`")
    imp.add_argument("file", help="the bundle file (`-`: stdin)")
    imp.add_argument(
        "--cwd",
        dest="import_cwd",
        help="the working directory to give it here (default: this directory; never the one the "
        "bundle names)",
    )
    imp.add_argument(
        "--on-conflict",
        choices=["keep-both", "skip"],
        help="when a conversation already exists here: keep both (new ids) or skip it "
        "(default: ask on a terminal, else fail)",
    )
    from openvaala_server.remote import transfer_cli

    transfer_cli.add_move(commands)


def run(args: argparse.Namespace) -> int:
    import asyncio

    # Here, not at the top: cli.py imports this module for every command, the TUI's start too.
    from openvaala_server.client import RpcError
    from openvaala_server.client.remote_spec import NoDirectory, local_directory
    from openvaala_server.domain.short_ids import IdPrefixError
    from openvaala_server.remote import transfer_cli

    if transfer_cli.applies(args):
        return transfer_cli.run(args)
    try:
        if args.command == "export":
            output = os.path.abspath(args.output) if args.output else None
            return asyncio.run(_export(args.id, output, os.getcwd()))
        cwd = local_directory(args.import_cwd)
        return asyncio.run(_import(os.path.abspath(args.file), cwd, args.on_conflict))
    except (IdPrefixError, NoDirectory) as exc:
        print(f"openvaala: {exc}", file=sys.stderr)
        return 2
    except RpcError as exc:
        print(f"openvaala: {exc.message}", file=sys.stderr)
        return 1
    except (OSError, RuntimeError) as exc:
        print(f"openvaala: {exc}", file=sys.stderr)
        return 1


async def _export(typed: str, output: str | None, here: str) -> int:
    """`output`: the bundle's absolute path (None: ID.openvaala.tar in `here`)."""
    from openvaala_server.client import Client
    from openvaala_server.client.conversation_ids import resolve

    async with await Client.connect(client_name="openvaala-export", reconnect=False) as client:
        cid = await resolve(client, typed)
        output = output or f"{here.rstrip('/')}/{cid}.openvaala.tar"
        result = await client.request(
            methods.CONVERSATION_EXPORT, {"conversationId": cid, "path": output}
        )
    extra = len(result["conversations"]) - 1
    also = f" with {extra} ancestor(s)" if extra else ""
    print(f"exported {cid}{also} to {result['path']} ({result['bytes']} bytes)")
    for missing in result["missingAncestors"]:
        print(f"note: ancestor {missing} is not in this data directory", file=sys.stderr)
    return 0


async def _import(path: str, cwd: str, on_conflict: str | None) -> int:
    import asyncio

    from openvaala_server.client import Client, RpcError

    # The directory the command runs in, as Codex and Claude Code resume a session where they
    # start: the bundle's own directory could be `~` (docs/design.md, "An import's working
    # directory").
    params: dict[str, Any] = {"path": path, "cwd": cwd, "onConflict": on_conflict or "ask"}
    async with await Client.connect(client_name="openvaala-import", reconnect=False) as client:
        try:
            result = await client.request(methods.CONVERSATION_IMPORT, params)
        except RpcError as exc:
            if exc.kind != "import_conflict" or on_conflict or not sys.stdin.isatty():
                if exc.kind == "import_conflict":
                    print(f"openvaala: {exc.message}; pass --on-conflict", file=sys.stderr)
                    return 1
                raise
            question = f"{exc.message}. Keep both or skip? [k/s] "
            answer = (await asyncio.to_thread(input, question)).strip().lower()
            params["onConflict"] = "keep-both" if answer.startswith("k") else "skip"
            result = await client.request(methods.CONVERSATION_IMPORT, params)
    report_import(result)
    return 0

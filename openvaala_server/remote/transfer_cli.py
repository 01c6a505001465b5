"""`export --remote`, `import --remote`, `import -`, `export -o -` and `move ID --from A --to B`:
bundles carried between machines by the client, never by a file on the daemon's side
(docs/remote.md, "Bundles between machines").

The bundle goes through the daemons' HTTP routes (`GET /api/conversations/ID/export`,
`POST /api/import`), over ssh for a remote machine: the same bytes `openvaala export` writes, with
the fork ancestors and checkpoints of the conversation."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from openvaala_server.client.remote_spec import Remote, configured, parse, working_directory


def add_move(commands: Any) -> None:
    move = commands.add_parser(
        "move",
        help="copy a conversation, its fork ancestors and checkpoints to another machine's daemon",
        description="Export conversation ID from the daemon of --from and import it into the "
        "daemon of --to (either one this machine when left out), over ssh. The conversation "
        "stays where it was: archive or delete it there once the copy is checked.",
    )
    move.add_argument("id", help="the conversation id (or a unique prefix of 6+ characters)")
    move.add_argument("--from", dest="source", metavar="[USER@]HOST", help="default: here")
    move.add_argument(
        "--to",
        dest="target",
        metavar="[USER@]HOST[:DIR]",
        help="default: here; DIR: the working directory it gets there (default: the remote "
        "home; here: this directory)",
    )
    move.add_argument("--on-conflict", choices=["keep-both", "skip"], default=None)


def applies(args: argparse.Namespace) -> bool:
    if args.command == "move" or configured() is not None:
        return True
    return getattr(args, "output", None) == "-" or getattr(args, "file", None) == "-"


def run(args: argparse.Namespace) -> int:
    from openvaala_server.client import RpcError
    from openvaala_server.client.remote import RemoteUnavailable
    from openvaala_server.domain.short_ids import IdPrefixError
    from openvaala_server.remote.machines import TransferFailed

    try:
        if args.command == "export":
            return _export(configured(), args.id, args.output)
        if args.command == "import":
            return _import(configured(), args.file, args.import_cwd, args.on_conflict)
        source = parse(args.source) if args.source else None
        target = parse(args.target) if args.target else None
        return _move(source, target, args.id, args.on_conflict)
    except (IdPrefixError, ValueError) as exc:
        print(f"openvaala: {exc}", file=sys.stderr)
        return 2
    except (RpcError, TransferFailed, RemoteUnavailable, OSError, RuntimeError) as exc:
        print(f"openvaala: {exc}", file=sys.stderr)
        return 1


async def _fetch(remote: Remote | None, typed: str) -> tuple[str, bytes]:
    from openvaala_server.remote.machines import Machine

    machine = Machine(remote)
    cid = await machine.resolve(typed)
    return cid, await machine.export(cid)


def _export(remote: Remote | None, typed: str, output: str | None) -> int:
    import asyncio

    cid, bundle = asyncio.run(_fetch(remote, typed))
    origin = remote.host if remote else "this machine"
    if output == "-" or (output is None and not sys.stdout.isatty()):
        sys.stdout.buffer.write(bundle)
        sys.stdout.buffer.flush()
        print(f"exported {cid} from {origin} ({len(bundle)} bytes)", file=sys.stderr)
        return 0
    path = os.path.abspath(output or f"{cid}.openvaala.tar")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # as the daemon writes one
    with os.fdopen(fd, "wb") as file:
        file.write(bundle)
    print(f"exported {cid} from {origin} to {path} ({len(bundle)} bytes)")
    return 0


def _import(remote: Remote | None, file: str, cwd: str | None, on_conflict: str | None) -> int:
    import asyncio

    from openvaala_server.import_report import report_import
    from openvaala_server.remote.machines import Machine

    if file == "-":
        bundle = sys.stdin.buffer.read()
    else:
        with open(file, "rb") as opened:
            bundle = opened.read()
    where = working_directory(cwd, remote)
    report_import(asyncio.run(Machine(remote).import_(bundle, where, on_conflict or "ask")))
    return 0


def _move(source: Remote | None, target: Remote | None, typed: str, on_conflict: str | None) -> int:
    import asyncio

    from openvaala_server.import_report import report_import
    from openvaala_server.remote.machines import Machine

    if (source and source.destination) == (target and target.destination):
        raise ValueError("--from and --to name the same machine")
    where = working_directory(None, target)

    async def move() -> tuple[str, int, dict[str, Any]]:
        cid, bundle = await _fetch(source, typed)
        return cid, len(bundle), await Machine(target).import_(bundle, where, on_conflict or "ask")

    cid, size, result = asyncio.run(move())
    origin = source.host if source else "this machine"
    print(
        f"moved {cid} from {origin} to {target.host if target else 'this machine'} ({size} bytes)"
    )
    report_import(result)
    return 0

"""`--remote [user@]host[:dir]` on the commands whose client may run on another machine than the
daemon (docs/remote.md). The option sets `OPENVAALA_REMOTE`, which the client library reads, so
every client (the terminal UI, `exec`, the editor bridge, the ACP agent…) takes it the same way."""

from __future__ import annotations

import argparse
import os
from typing import Any

from openvaala_server.client.remote_spec import ENV_REMOTE, parse

# The commands that are clients of the daemon; `serve`, `setup`, `reindex` and `bridge` work on
# this machine's data directory only.
CLIENT_COMMANDS = ("tui", "exec", "list", "export", "import", "web", "lsp", "acp")
HELP = (
    "run this client here and the daemon on HOST, through your ssh (docs/remote.md); "
    "DIR: the working directory of new conversations there (default: the remote home). "
    f"Also ${ENV_REMOTE}"
)


def add_options(parser: argparse.ArgumentParser, commands: Any) -> None:
    parser.add_argument("--remote", metavar="[USER@]HOST[:DIR]", help=HELP)
    for name in CLIENT_COMMANDS:
        # SUPPRESS: `openvaala --remote h exec` keeps h (a subparser's default would erase it).
        commands.choices[name].add_argument(
            "--remote", metavar="[USER@]HOST[:DIR]", help=HELP, default=argparse.SUPPRESS
        )


def apply(args: argparse.Namespace, parser: argparse.ArgumentParser) -> bool:
    """Put `--remote` into the environment of this process (and of what it starts); False, said
    on stderr by argparse, when it is malformed or given to a command that is not a client."""
    spec = getattr(args, "remote", None)
    # `$OPENVAALA_REMOTE` too: these would otherwise act on this machine's browser sessions
    # while the user means the remote machine's.
    remote = spec if spec is not None else os.environ.get(ENV_REMOTE, "").strip()
    if remote and args.command == "web" and (args.sessions or args.end or args.logout_all):
        parser.error(
            f"--remote (or ${ENV_REMOTE}) opens the browser only; manage the browser sessions of "
            "that machine there: ssh HOST openvaala web --sessions (or --end ID, --logout-all)"
        )
    if spec is None:
        if remote and args.command in (None, *CLIENT_COMMANDS):
            try:  # what every client reads: wrong, it is named here, not a traceback there
                parse(remote)
            except ValueError as exc:
                parser.error(f"${ENV_REMOTE}: {exc}")
        return True
    if args.command not in (None, *CLIENT_COMMANDS):
        parser.error(f"--remote does not apply to `openvaala {args.command}`")
    try:
        parse(spec)
    except ValueError as exc:
        parser.error(str(exc))
    os.environ[ENV_REMOTE] = spec
    return True

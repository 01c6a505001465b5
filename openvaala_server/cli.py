"""`openvaala` command line: parses arguments and calls; no logic of its own."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from openvaala_server import __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="openvaala",
        description="OpenVaala: a local runtime daemon for AI agents. "
        "With no command, opens the terminal UI (starting the daemon if needed).",
    )
    parser.add_argument("--version", action="version", version=f"openvaala {__version__}")
    parser.add_argument("--cwd", help="working directory of a new conversation (default: here)")
    commands = parser.add_subparsers(dest="command")

    serve = commands.add_parser(
        "serve", help="run the daemon (foreground), or start/stop/status it"
    )
    serve.add_argument("action", nargs="?", choices=["start", "stop", "status"])
    serve.add_argument("--port", type=int, help="port on 127.0.0.1 (0 picks a free one)")

    commands.add_parser("reindex", help="rebuild metadata.db from the conversation directories")
    commands.add_parser("web", help="open the web UI in a browser (starting the daemon if needed)")
    commands.add_parser("lsp", help="run the editor bridge (LSP over stdio)")
    commands.add_parser("tui", help="open the terminal UI (the default)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from openvaala_server import commands

    if args.command == "serve":
        if args.action == "start":
            return commands.serve_start(args.port)
        if args.action == "stop":
            return commands.serve_stop()
        if args.action == "status":
            return commands.serve_status()
        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        return commands.serve_foreground(args.port)
    if args.command == "reindex":
        return asyncio.run(commands.reindex())
    if args.command == "web":
        return commands.open_web()
    if args.command == "lsp":
        return commands.run_lsp()
    return commands.run_tui(args.cwd)


if __name__ == "__main__":
    sys.exit(main())

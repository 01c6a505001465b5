"""`openvaala` command line: parses arguments and calls; no logic of its own."""

from __future__ import annotations

import argparse
import sys

from openvaala_server import __version__, bundle_cli, list_cli
from openvaala_server.early_interrupt import interruptible
from openvaala_server.remote import cli as remote_cli
from openvaala_server.setup import cli as setup_cli


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="openvaala",
        description="OpenVaala: a local runtime daemon for AI agents. "
        "With no command, opens the terminal UI (starting the daemon if needed).",
    )
    parser.add_argument("--version", action="version", version=f"openvaala {__version__}")
    _tui_options(parser)
    commands = parser.add_subparsers(dest="command")

    serve = commands.add_parser(
        "serve", help="run the daemon (foreground), or start, stop, restart it or ask its status"
    )
    serve.add_argument(
        "action",
        nargs="?",
        choices=["start", "stop", "restart", "status"],
        help="start: in the background; stop: gracefully (running turns are saved); restart: "
        "stop, then start with the current config.toml; status: whether it runs "
        "(none: run in the foreground)",
    )
    serve.add_argument("--port", type=int, help="port on 127.0.0.1 (0 picks a free one)")

    _exec_options(
        commands.add_parser(
            "exec",
            help="run one turn for a script and print the reply (like `codex exec`)",
            description="Send PROMPT (or stdin) to an agent through the daemon (starting it "
            "if needed) and print its reply to stdout as it streams. Exit status: 0 completed, "
            "1 failed, 2 bad arguments, 3 an approval no --allow rule grants, 4 no daemon, "
            "130 interrupted.",
        )
    )
    list_cli.add_command(commands)
    commands.add_parser("reindex", help="rebuild metadata.db from the conversation directories")
    setup_cli.add_command(commands)
    bundle_cli.add_commands(commands)
    _web_options(
        commands.add_parser(
            "web", help="open the web UI in a browser (starting the daemon if needed)"
        )
    )
    commands.add_parser(
        "editors", help="print where the Neovim plug-in and the VS Code extension are installed"
    )
    commands.add_parser("lsp", help="run the editor bridge (LSP over stdio)")
    commands.add_parser("acp", help="run the Agent Client Protocol agent (over stdio)")
    # Arguments a Codex client passes to `codex app-server` (`--analytics-default-enabled`,
    # `--listen stdio://`) are accepted and ignored: only stdio is served (docs/codex.md).
    commands.add_parser(
        "app-server", help="speak Codex's app-server protocol over stdio (for Codex clients)"
    )
    # SUPPRESS: `openvaala --cwd X tui` keeps X (a subparser's defaults would overwrite it).
    tui = commands.add_parser(
        "tui", help="open the terminal UI (the default)", argument_default=argparse.SUPPRESS
    )
    _tui_options(tui)
    commands.add_parser(
        "bridge",
        help="relay stdio to this machine's daemon, starting it if needed "
        "(what `--remote` runs over ssh)",
    )
    remote_cli.add_options(parser, commands)
    _describe(parser)
    return parser


def _describe(parser: argparse.ArgumentParser) -> None:
    """Each subcommand's `--help` opens with what it does: its line in `openvaala --help`,
    unless it has a longer description of its own (argparse shows neither by default)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                sub = action.choices[choice.dest]
                sub.description = sub.description or choice.help
                _describe(sub)


def _exec_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prompt", nargs="?", help="the message (default or `-`: read stdin)")
    parser.add_argument("--json", action="store_true", help="print every event as a JSON line")
    parser.add_argument("--agent", help="the agent of a new conversation (default: configured)")
    parser.add_argument("--model", help="the model to use (default: the agent's)")
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="RULE",
        help="answer an approval it matches with allow: TOOL, TOOL(PATTERN) "
        "(e.g. 'shell(git diff*)') or * (repeatable; unmatched approvals fail the call)",
    )
    parser.add_argument(
        "--image",
        action="append",
        default=[],
        metavar="FILE",
        help="attach an image (PNG, JPEG, GIF or WebP, up to 5 MB) to the prompt "
        "(repeatable, at most 4)",
    )
    _tui_options(parser)


def _tui_options(parser: argparse.ArgumentParser) -> None:
    """`openvaala [OPTIONS]` and `openvaala tui [OPTIONS]` take the same ones."""
    parser.add_argument("--cwd", help="working directory of a new conversation (default: here)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--continue",
        dest="continue_last",
        action="store_true",
        help="open the last conversation in this directory (a new one if there is none)",
    )
    which.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="open conversation ID (or a unique prefix of 6+ characters, as `openvaala list` "
        "shows); with no ID, pick one from the list",
    )


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.command != "app-server":
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    from openvaala_server import commands

    if not (args.command == "serve" and args.action is None):
        interruptible()  # `openvaala serve` does it once its modules are loaded
    if not remote_cli.apply(args, parser):
        return 2
    if args.command == "bridge":
        from openvaala_server.remote.bridge import run as run_bridge

        return run_bridge()
    if args.command == "serve":
        if args.action == "start":
            return commands.serve_start(args.port)
        if args.action == "stop":
            return commands.serve_stop()
        if args.action == "restart":
            return commands.serve_restart(args.port)
        if args.action == "status":
            return commands.serve_status()
        import logging

        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        return commands.serve_foreground(args.port)
    if args.command == "exec":
        return commands.run_exec(args)
    if args.command == "list":
        return list_cli.run(args)
    if args.command in bundle_cli.COMMANDS:
        return bundle_cli.run(args)
    if args.command == "setup":
        return setup_cli.run(args)
    if args.command == "reindex":
        import asyncio

        return asyncio.run(commands.reindex())
    if args.command == "web":
        return _run_web(args)
    if args.command == "editors":
        return commands.print_editors()
    if args.command == "lsp":
        return commands.run_lsp()
    if args.command == "app-server":
        from openvaala_server.codex.relay import main as run_app_server

        return run_app_server()
    if args.command == "acp":
        from openvaala_acp.main import main as run_acp

        return run_acp()
    return commands.run_tui(
        getattr(args, "cwd", None),
        continue_last=getattr(args, "continue_last", False),
        resume=getattr(args, "resume", None),
    )


def _web_options(web: argparse.ArgumentParser) -> None:
    what = web.add_mutually_exclusive_group()
    what.add_argument(
        "--sessions",
        action="store_true",
        help="list the signed-in browsers (signed in, last used, browser)",
    )
    what.add_argument("--end", metavar="ID", help="sign one browser out (an ID from --sessions)")
    what.add_argument(
        "--logout-all", action="store_true", help="sign every browser out of the web UI"
    )


def _run_web(args: argparse.Namespace) -> int:
    from openvaala_server import web_cli

    if args.sessions:
        return web_cli.list_sessions()
    if args.end:
        return web_cli.end_session(args.end)
    if args.logout_all:
        return web_cli.logout_all()
    return web_cli.open_web()


if __name__ == "__main__":
    sys.exit(main())

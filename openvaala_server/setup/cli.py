"""`openvaala setup`'s flags, and the choice between asking and flags-only mode."""

from __future__ import annotations

import argparse
import sys

from openvaala_server.setup.presets import BY_KEY


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    setup = commands.add_parser(
        "setup",
        help="configure a model: pick a provider, check the key, list the models, write "
        "config.toml and run a test turn",
        description="Configure a model step by step. At a terminal it asks; with --provider "
        "it asks nothing (for scripts). The API key is never a flag: it is read from an "
        "environment variable (--api-key-env) or from stdin (--api-key-stdin) and then kept in "
        "a file of the config directory that only you can read. Exit status: 0 done, 1 the "
        "provider failed (nothing written), 2 bad or missing flags, 3 config.toml written but "
        "the test turn failed.",
    )
    setup.add_argument("--provider", choices=sorted(BY_KEY), help="ask nothing: use these flags")
    setup.add_argument("--base-url", help="the server's address (compatible servers, proxies)")
    setup.add_argument("--model", help="the model id (default: asked, or the server's only one)")
    setup.add_argument("--name", help="the model's table name in config.toml")
    key = setup.add_mutually_exclusive_group()
    key.add_argument("--api-key-env", metavar="VAR", help="read the key from this variable")
    key.add_argument(
        "--api-key-stdin", action="store_true", help="read the key from stdin and store it"
    )
    setup.add_argument(
        "--context-window", type=int, help="tokens (only for a hosted model not in the catalog)"
    )
    setup.add_argument("--no-test", action="store_true", help="skip the test turn")


def run(args: argparse.Namespace) -> int:
    from openvaala_server.config import config_path
    from openvaala_server.setup.prompts import FlagsOnly, Terminal
    from openvaala_server.setup.run import Flags
    from openvaala_server.setup.run import run as run_setup

    flags = Flags(
        provider=args.provider,
        base_url=args.base_url,
        model=args.model,
        name=args.name,
        api_key_env=args.api_key_env,
        api_key_stdin=args.api_key_stdin,
        context_window=args.context_window,
        test=not args.no_test,
    )
    interactive = args.provider is None
    if interactive and not sys.stdin.isatty():
        print(
            "openvaala setup: not at a terminal: give --provider and the other flags",
            file=sys.stderr,
        )
        return 2
    return run_setup(flags, Terminal() if interactive else FlagsOnly(), config_path())

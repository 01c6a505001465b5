"""What each `openvaala` command does, as plain functions returning an exit code.

Heavy modules (the configuration, the store, the daemon, the terminal UI) are imported by the
commands that need them, so `openvaala exec` and the terminal UI start without them
(docs/design.md).
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import time
from typing import TYPE_CHECKING

# The reader side of the lock, as the client library reads it: the store (and with it SQLite)
# is imported only by the commands that open it, not on the way to the terminal UI.
from openvaala_server import daemon_spawn
from openvaala_server.discovery import is_locked, read_lock
from openvaala_server.early_interrupt import interruptible
from openvaala_server.start_dir import leave_start_dir

if TYPE_CHECKING:
    from openvaala_server.store.paths import DataDir

STOP_TIMEOUT_S = 20.0


def _err(message: str) -> None:
    print(f"openvaala: {message}", file=sys.stderr)


def serve_foreground(port: int | None) -> int:
    from openvaala_server import gc_tuning

    gc_tuning.pause()  # until the daemon is ready (`gc_tuning.settle`)
    import asyncio

    from openvaala_server.config import ConfigError, load_config
    from openvaala_server.errors import StoreError
    from openvaala_server.server import PortInUse, serve
    from openvaala_server.store.lock import LockHeld
    from openvaala_server.store.paths import DataDir

    leave_start_dir(DataDir.resolve().root)
    try:
        config = load_config()
    except ConfigError as exc:
        _err(f"configuration error: {exc}")
        return 2
    data_dir = DataDir.resolve()
    interruptible()  # from here on, Ctrl+C stops the daemon gracefully (docs/design.md)
    try:
        asyncio.run(serve(data_dir, config, config.server.port if port is None else port))
    except LockHeld as exc:
        _err(
            f"another OpenVaala server (pid {exc.pid}, address {exc.address or 'starting'}) "
            f"is using {data_dir.root}; stop it with `openvaala serve stop`"
        )
        return 1
    except PortInUse as exc:
        _err(str(exc))
        return 1
    except StoreError as exc:  # e.g. an SQLite too old for the index
        _err(f"cannot open {data_dir.root}: {exc}")
        return 1
    except KeyboardInterrupt:
        pass
    return 0


def running_address(data_dir: DataDir) -> str | None:
    """The address of the server holding this data directory, if one runs and serves."""
    return daemon_spawn.running_address(data_dir.root)


def serve_start(port: int | None) -> int:
    from openvaala_server.config import ConfigError, load_config
    from openvaala_server.store.paths import DataDir

    data_dir = DataDir.resolve()
    address = running_address(data_dir)
    if address:
        running_port = address.rsplit(":", 1)[-1]
        if port not in (None, 0) and str(port) != running_port:
            _err(
                f"OpenVaala is already running at http://{address}, not on port {port}: "
                "stop it first (`openvaala serve stop`) to start it on another port"
            )
            return 1
        print(f"OpenVaala is already running at http://{address}")
        return 0
    try:
        load_config()
    except ConfigError as exc:
        _err(f"configuration error: {exc}")
        return 2
    if not _ensured(data_dir):
        return 1
    starting = daemon_spawn.spawn(data_dir.root, port)
    try:
        address = daemon_spawn.wait_healthy(starting)
    except daemon_spawn.StartFailed as exc:
        _err(str(exc))
        return 1
    print(f"OpenVaala is running at http://{address} (pid {starting.process.pid})")
    return 0


def _ensured(data_dir: DataDir) -> bool:
    """Make the data directory, or say why it cannot be (a file in its place, no permission) as
    `openvaala serve` does, rather than with a traceback."""
    try:
        data_dir.ensure()
    except OSError as exc:
        _err(f"cannot open {data_dir.root}: {data_dir.unusable(exc)}")
        return False
    return True


def serve_stop() -> int:
    from openvaala_server.store.paths import DataDir

    data_dir = DataDir.resolve()
    info = read_lock(data_dir.lock_path)
    if not is_locked(data_dir.lock_path) or info is None or info.pid is None:
        print("OpenVaala is not running")
        return 0
    try:
        os.kill(info.pid, signal.SIGTERM)
    except ProcessLookupError:
        return 0
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        if not is_locked(data_dir.lock_path):
            print(f"OpenVaala (pid {info.pid}) stopped")
            return 0
        time.sleep(0.05)
    _err(f"the server (pid {info.pid}) did not stop within {STOP_TIMEOUT_S:.0f} s")
    return 1


def serve_restart(port: int | None) -> int:
    """Stop the daemon (if it runs) and start it again: what a `[server]` change needs."""
    from openvaala_server.config import ConfigError, load_config

    try:
        load_config()  # a broken file must not stop a working daemon
    except ConfigError as exc:
        _err(f"configuration error: {exc}; the running daemon was left as it is")
        return 2
    stopped = serve_stop()
    if stopped != 0:
        return stopped
    return serve_start(port)


def serve_status() -> int:
    from openvaala_server.store.paths import DataDir

    data_dir = DataDir.resolve()
    info = read_lock(data_dir.lock_path)
    if not is_locked(data_dir.lock_path) or info is None:
        print(f"OpenVaala is not running (data directory {data_dir.root})")
        return 3
    print(f"OpenVaala is running: pid {info.pid}, http://{info.address}, data {data_dir.root}")
    return 0


async def reindex() -> int:
    from openvaala_server.errors import StoreError
    from openvaala_server.store import closed_mark
    from openvaala_server.store.paths import DataDir
    from openvaala_server.store.reindex import reindex as rebuild

    data_dir = DataDir.resolve()
    if is_locked(data_dir.lock_path):
        info = read_lock(data_dir.lock_path)
        pid = info.pid if info else "?"
        _err(
            f"a server (pid {pid}) is using {data_dir.root}; reindex needs the data directory "
            "to itself: run `openvaala serve stop` first"
        )
        return 1
    if not _ensured(data_dir):
        return 1
    try:
        report = await rebuild(data_dir)
    except StoreError as exc:
        _err(str(exc))
        return 1
    # Built, fsynced and closed by this process, with no server on it: as a clean stop leaves
    # it, so the next start need not check every page (docs/storage.md, "The index's check at
    # start"), seconds at 50,000 conversations.
    db = data_dir.metadata_db
    closed_mark.write(db, closed_mark.file_id(db))
    print(report.describe())
    return 0


def run_lsp() -> int:
    import importlib

    try:
        lsp = importlib.import_module("openvaala_lsp.server")
    except ImportError:
        _err("the editor bridge is not available in this build")
        return 1
    return int(lsp.main())


def run_exec(args: argparse.Namespace) -> int:
    if args.resume == "":
        from openvaala_server.exec import EXIT_USAGE

        _err("exec --resume needs a conversation ID (`openvaala exec --continue` takes the last)")
        return EXIT_USAGE
    # Before the prompt is read (stdin may be slow) and before the client's own imports: the
    # daemon's start is the longest part of a cold exec (docs/design.md, "A cold exec, end to
    # end").
    _start_daemon_early(args.cwd)
    from openvaala_server import exec as one_turn
    from openvaala_server.client.remote_spec import NoDirectory, configured, working_directory

    try:
        request = one_turn.ExecRequest(
            prompt=one_turn.read_prompt(args.prompt, sys.stdin),
            cwd=working_directory(args.cwd, configured()) or "",
            agent=args.agent,
            model=args.model,
            continue_last=args.continue_last,
            resume=args.resume or None,
            json=args.json,
            allow=[one_turn.AllowRule.parse(rule) for rule in args.allow],
            images=one_turn.read_images(args.image),
            cwd_given=args.cwd is not None,
        )
    except (one_turn.UsageError, NoDirectory) as exc:
        _err(str(exc))
        return one_turn.EXIT_USAGE
    return one_turn.run(request)


def _start_daemon_early(cwd: str | None) -> None:
    """Begin starting this machine's daemon, if none runs, so that it starts while the client
    imports and reads what it needs (docs/design.md, "Serving before the runtime is built")."""
    from openvaala_server.client.remote_spec import ENV_REMOTE, NoDirectory, local_directory

    if os.environ.get(ENV_REMOTE):
        return  # the daemon is the remote machine's: its bridge starts it there
    try:
        where = local_directory(cwd)
    except NoDirectory:
        return  # said by the command itself, next
    if os.path.isdir(where):  # a bad --cwd fails without starting anything
        from openvaala_server.client import start_server_early

        start_server_early()


def run_tui(cwd: str | None, *, continue_last: bool = False, resume: str | None = None) -> int:
    """`resume`: None (not asked), "" (`--resume` alone: the list) or a conversation id."""
    # No garbage collection until the first screen is up (the app turns it back on): its
    # passes over everything the imports create were a tenth of the start-up's CPU time
    # (docs/design.md, "Start-up time").
    gc.disable()
    _start_daemon_early(cwd)  # overlaps the daemon's start with the terminal UI's imports
    try:
        from openvaala_tui.app import main as tui_main
    except ImportError:
        _err("the terminal UI is not available in this build")
        return 1
    return tui_main(cwd, continue_last=continue_last, resume_id=resume or None, pick=resume == "")


def print_editors() -> int:
    """Where the editor plug-ins are: package data of an installed `openvaala`, the repository's
    `editors/` in a clone (docs/editors.md)."""
    from pathlib import Path

    root = (Path(__file__).parent / "editors").resolve()
    if not root.is_dir():
        _err("the editor plug-ins are not in this build")
        return 1
    print(f"nvim    {root / 'nvim'}")
    print(f"vscode  {root / 'vscode'}")
    return 0

"""Reloading `config.toml` while the daemon runs (docs/configuration.md, "Changing the file").

The watcher looks at the file's size, change time and inode twice a second (a stat: nothing to
install, and it sees an editor's save-by-rename as well as an in-place write), and on SIGHUP.
A file that loads replaces the configuration: new conversations, turns and MCP starts use it, while
a turn already running keeps the one it started with (`LiveTurn.config`). A file that does not load
changes nothing: the daemon keeps its last good configuration and every client is told what is
wrong (`config/error`), and told again when a fixed file loads (`config/reloaded`).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

import anyio

from openvaala_server.config import WINDOW_PENDING, Config, ConfigError, config_path, load_config
from openvaala_server.protocol import methods, payloads
from openvaala_server.runtime.places import Places

if TYPE_CHECKING:
    from openvaala_server.runtime.ports import Services

log = logging.getLogger(__name__)

POLL_S = 0.5
# What changes with a reload, in the order a message lists them. `[server]` settings are read at
# start (the port, frame and queue limits): a change there needs `openvaala serve restart`.
SECTIONS = (
    "default_agent",
    "models",
    "agents",
    "mcp_servers",
    "hooks",
    "retry",
    "subagents",
    "server",
)
RESTART_SECTIONS = ("server",)

Signature = tuple[int, int, int] | None  # (size, mtime_ns, inode) of the file, None: no file


async def windows_resolved(config: Config) -> Config:
    """`config` with local servers' windows asked of them (models/probe.py). The prober is
    imported only when a model waits for its window: not on a start's way to its first turn
    (docs/design.md, "Exec's spawn and the daemon's first turn")."""
    if all(model.window_source != WINDOW_PENDING for model in config.models.values()):
        return config
    from openvaala_server.models.probe import resolve_windows

    return await resolve_windows(config)


@dataclass(frozen=True)
class ConfigStatus:
    """What `initialize` tells a client that connects later, and the notifications carry."""

    path: str
    state: Literal["ok", "error"]
    message: str
    key: str | None = None

    def to_wire(self) -> payloads.ConfigState:
        wire: payloads.ConfigState = {
            "path": self.path,
            "state": self.state,
            "message": self.message,
        }
        if self.key is not None:
            wire["key"] = self.key
        return wire


def changed_sections(old: Config, new: Config) -> list[str]:
    return [name for name in SECTIONS if getattr(old, name) != getattr(new, name)]


def _signature(path: str) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


class ConfigWatcher:
    def __init__(self, runtime: Services, poll_s: float = POLL_S) -> None:
        self.runtime = runtime
        self.path = str(runtime.config.path or config_path())
        self.poll_s = poll_s
        self.status = ConfigStatus(self.path, "ok", "loaded at start")
        self._seen: Signature = _signature(self.path)
        self._lock = anyio.Lock()
        self._places = Places.now(self.path, str(runtime.store.data_dir.root))
        self._replaced: str | None = None  # the last replacement reported

    async def watch(self) -> None:
        """Poll until cancelled (the server's supervisor owns it: server.py)."""
        while True:
            await anyio.sleep(self.poll_s)
            try:
                await self.check()
            except Exception:  # the watcher must outlive any surprise
                log.exception("checking %s failed", self.path)

    def _look(self) -> tuple[tuple[str, bool] | None, Signature]:
        problem = self._places.replaced()
        return problem, None if problem else _signature(self.path)

    async def check(self, *, force: bool = False) -> None:
        """Reload when the file changed since last seen (or always, with `force`)."""
        async with self._lock:
            # Both looks in one trip to a worker thread: twice a second, each trip woke the loop
            # and took the GIL from the streams, ~2.7% of the daemon's time under fifty
            # streaming agents (docs/design.md, "Costs that stay flat on real-shaped data").
            problem, seen = await anyio.to_thread.run_sync(self._look)
            if problem:
                self._refuse(*problem)
                return
            if seen == self._seen and not force:
                return
            self._seen = seen
            try:
                config = await anyio.to_thread.run_sync(load_config)
                config = await windows_resolved(config)
            except ConfigError as exc:
                log.warning("config not reloaded: %s", exc)
                self._fail(f"{exc} — the daemon keeps its last good configuration", exc.key)
                return
            self._apply(config)

    def _refuse(self, message: str, data_dir: bool) -> None:
        """A protected place was replaced under the daemon: load nothing from it, write nothing
        to it, until a restart (docs/security.md)."""
        if data_dir:
            self.runtime.store.halt_writes(message)
        if message == self._replaced:
            return  # reported already
        self._replaced = message
        log.warning("%s", message)
        self._fail(message, "(file)")

    def _fail(self, message: str, key: str) -> None:
        """Keep the last good configuration and tell every client what is wrong, and where:
        `config/error` always names a key (`(file)`, `(syntax)` or the setting's)."""
        self.status = ConfigStatus(self.path, "error", message, key=key)
        note: payloads.ConfigErrorNote = {
            "path": self.path,
            "state": "error",
            "message": message,
            "key": key,
        }
        self.runtime.broadcast.publish(methods.CONFIG_ERROR, note)

    def _apply(self, config: Config) -> None:
        old = self.runtime.config
        changed = changed_sections(old, config)
        was_error = self.status.state == "error"
        if not changed and not was_error:
            return  # saved without a change (or only comments)
        # The listener runs with the `[server]` it started with (port, frame and queue limits):
        # a new value there waits for `serve restart`, and is reported until then.
        self.runtime.config = replace(config, server=old.server)
        restarted = self.runtime.mcp.reconfigure(config.mcp_servers)
        self.runtime.retire_stale_providers()
        restart = [name for name in changed if name in RESTART_SECTIONS]
        words = ", ".join(changed) if changed else "nothing"
        message = f"reloaded {self.path}: {words} changed"
        if restart:
            message += f" ([{', '.join(restart)}] applies after `openvaala serve restart`)"
        self.status = ConfigStatus(self.path, "ok", message)
        log.info("%s", message)
        self.runtime.broadcast.publish(
            methods.CONFIG_RELOADED,
            {
                "path": self.path,
                "state": "ok",
                "message": message,
                "changed": changed,
                "restartNeeded": restart,
                "mcpRestarted": restarted,
            },
        )

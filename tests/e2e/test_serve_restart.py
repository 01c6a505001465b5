"""`openvaala serve restart`: what a `[server]` change needs (the daemon says so when the file
changes there); it refuses to stop a working daemon while config.toml has an error."""

from __future__ import annotations

from typing import Any

from openvaala_server.client import Client
from openvaala_server.config import ServerConfig
from openvaala_server.store.lock import read_lock
from tests.support.daemon import Daemon
from tests.support.events import collect_until, method_is
from tests.support.json import j


def pid_of(d: Daemon) -> int | None:
    info = read_lock(d.data_dir.lock_path)
    return info.pid if info else None


async def test_serve_restart_applies_server_settings_and_refuses_a_broken_file(
    daemon_factory: Any,
) -> None:
    d: Daemon = daemon_factory(start=False)
    started = d.cli("serve", "start")
    assert started.returncode == 0, started.stderr
    first = pid_of(d)
    good = d.config_path.read_text()

    client = await Client.connect(data_dir=d.data_dir, start=False, reconnect=False)
    try:
        d.config_path.write_text(good.replace("port = 0", "port = 0\nmax_frame_bytes = 4096"))
        notes = await collect_until(client, method_is("config/reloaded"))
        reloaded = notes[-1]["params"]
        assert reloaded["restartNeeded"] == ["server"]
        assert "openvaala serve restart" in reloaded["message"]
        # The running listener keeps its limits until the restart, and says so truly.
        later = await Client.connect(data_dir=d.data_dir, start=False, reconnect=False)
        assert j(later.server_info)["capabilities"]["maxFrameBytes"] == ServerConfig.max_frame_bytes
        await later.close()
    finally:
        await client.close()

    restarted = d.cli("serve", "restart")
    assert restarted.returncode == 0, restarted.stderr
    assert "stopped" in restarted.stdout and "running at http://127.0.0.1:" in restarted.stdout
    second = pid_of(d)
    assert second is not None and second != first
    after = await Client.connect(data_dir=d.data_dir, start=False, reconnect=False)
    assert j(after.server_info)["capabilities"]["maxFrameBytes"] == 4096
    await after.close()

    d.config_path.write_text(good.replace("[agents.default]", "[agents.default]\ncolour = 1"))
    refused = d.cli("serve", "restart")
    assert refused.returncode == 2
    assert "agents.default.colour" in refused.stderr and "left as it is" in refused.stderr
    assert d.cli("serve", "status").returncode == 0 and pid_of(d) == second
    assert d.cli("serve", "stop").returncode == 0

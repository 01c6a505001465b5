"""Per-call limits of the shell tool, with real bubblewrap: processes, memory and the private /tmp.

Each limit is set low and hit on purpose; the call fails with a line naming the limit and the
setting that raises it, and a command within the defaults notices nothing.
"""

from __future__ import annotations

import shutil

import pytest

from openvaala_server.config import ConfigError, load_config
from openvaala_server.domain.permissions import Confinement, Limits
from openvaala_server.tools.base import ToolContext, ToolResult
from openvaala_server.tools.shell import ShellTool
from tests.server.tools.processes import survivors
from tests.server.tools.sandbox_places import Places
from tests.support.daemon import Daemon
from tests.support.events import completed_items, new_conversation, run_turn

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


async def shell(places: Places, command: str, limits: Limits, timeout_s: float = 60) -> ToolResult:
    confinement = Confinement(mode="workspace", network=False, limits=limits)
    ctx = ToolContext(cwd=places.work, emit_output=lambda _: None, confinement=confinement)
    return await ShellTool().run({"command": command, "timeout_s": timeout_s}, ctx)


async def test_a_fork_bomb_is_bounded_and_named(places: Places) -> None:
    mark = "4242.125"
    # Each process sleeps on a mark first, so the survivors check finds any that escaped.
    bomb = f"b() {{ sleep {mark} & b | b & }}; b; wait"
    result = await shell(places, bomb, Limits(processes=40), timeout_s=5)
    assert result.is_error
    assert "process limit (40 processes: `limits.processes`" in result.output
    assert survivors(mark) == []


async def test_a_memory_hog_is_stopped_and_named(places: Places) -> None:
    hog = "python3 -c 'x = bytearray(600 * 1024 * 1024); print(\"allocated\")'"
    result = await shell(places, hog, Limits(memory_mb=100))
    assert result.is_error
    assert "allocated" not in result.output
    assert "memory limit (100 MB: `limits.memory_mb`" in result.output


async def test_filling_the_private_tmp_stops_at_its_size(places: Places) -> None:
    fill = "head -c 50000000 /dev/zero > /tmp/big"
    result = await shell(places, fill, Limits(tmp_mb=5))
    assert result.is_error
    assert "No space left on device" in result.output
    assert "at most 5 MB (`limits.tmp_mb`" in result.output


async def test_the_defaults_leave_a_busy_command_alone(places: Places) -> None:
    busy = (
        "for i in $(seq 200); do sleep 0.2 & done; wait; "
        "head -c 100000000 /dev/zero > /tmp/big && "
        "python3 -c 'x = bytearray(300 * 1024 * 1024); print(\"allocated\")'"
    )
    result = await shell(places, busy, Limits())
    assert not result.is_error, result.output
    assert "allocated" in result.output
    assert "limit" not in result.output


def test_limits_in_config_are_read_and_typos_named(
    places: Places, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENVAALA_CONFIG", str(places.config))
    places.config.write_text(
        '[agents.builder]\nmodel = "demo"\nlimits = {processes = 64, tmp_mb = 8}\n'
    )
    limits = load_config().agents["builder"].permissions.limits
    assert limits == Limits(processes=64, memory_mb=Limits().memory_mb, tmp_mb=8)
    places.config.write_text('[agents.builder]\nmodel = "demo"\nlimits = {memory = 64}\n')
    with pytest.raises(ConfigError, match=r"agents\.builder\.limits\.memory: unknown key"):
        load_config()
    places.config.write_text('[agents.builder]\nmodel = "demo"\nlimits = {tmp_mb = 0}\n')
    with pytest.raises(ConfigError, match=r"agents\.builder\.limits\.tmp_mb: must be at least 1"):
        load_config()


async def test_an_agents_limits_reach_its_commands(places: Places) -> None:
    places.config.write_text(
        '[models.demo]\nprovider = "demo"\npace_ms = 0\n\n[agents.small]\nmodel = "demo"\n'
        'approval = "never"\nlimits = {tmp_mb = 5}\n'
    )
    daemon = Daemon(home=places.data, config_path=places.config, workdir=places.work)
    daemon.start()
    try:
        client = await daemon.client()
        cid = await new_conversation(client, str(places.work), agent="small")
        notes = await run_turn(client, cid, "run: head -c 50000000 /dev/zero > /tmp/big")
        await client.close()
    finally:
        daemon.stop()
    [result] = completed_items(notes, "tool_result")
    assert "at most 5 MB (`limits.tmp_mb`" in result["output"]

"""Ways around a call's limits (docs/security.md, "Limits of a command"): bubblewrap's `--dev`
makes a /dev/shm of half the RAM, outside `limits.tmp_mb`; a writable /sys/fs/cgroup lets a call
move itself out of the control group that counts its processes and memory.

Real bubblewrap and daemon; a fake provider scripts the attacker's commands.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.tools.sandbox_places import Places
from tests.support.daemon import Daemon
from tests.support.events import completed_items, new_conversation, run_turn

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bwrap")

AGENTS = "".join(
    f'\n[agents.{name}]\nmodel = "fake"\nsandbox = "{sandbox}"\napproval = "never"\n'
    "limits = { tmp_mb = 5 }\n"
    for name, sandbox in (("default", "workspace"), ("ops", "off"))
)


@pytest.fixture
def daemon(places: Places, fake_openai: FakeProvider) -> Iterator[Daemon]:
    places.config.write_text(fake_openai.config_toml("fake") + AGENTS)
    started = Daemon(home=places.data, config_path=places.config, workdir=places.work)
    started.start()
    try:
        yield started
    finally:
        started.stop()


async def run_command(
    daemon: Daemon, places: Places, fake: FakeProvider, command: str, agent: str
) -> str:
    fake.enqueue(Reply().tool_call("shell", {"command": command}), Reply().text("done"))
    client = await daemon.client()
    cid = await new_conversation(client, str(places.work), agent=agent)
    notes = await run_turn(client, cid, "go")
    await client.close()
    [output] = [item["output"] for item in completed_items(notes, "tool_result")]
    return str(output)


async def test_dev_shm_is_bounded_by_tmp_mb(
    daemon: Daemon, places: Places, fake_openai: FakeProvider
) -> None:
    command = (
        "head -c 50000000 /dev/zero > /dev/shm/big; ls -l /dev/shm/big | awk '{print \"SIZE:\" $5}'"
    )
    output = await run_command(daemon, places, fake_openai, command, "default")
    assert "No space left on device" in output
    size = int(output.split("SIZE:")[1].split()[0])
    assert size <= 5 * 1024 * 1024


@pytest.mark.parametrize("agent", ["default", "ops"])
async def test_a_call_cannot_leave_its_control_groups(
    daemon: Daemon, places: Places, fake_openai: FakeProvider, agent: str
) -> None:
    command = (
        "for f in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs; do "
        '[ -e "$f" ] && echo $$ > "$f" && echo "LEFT:$f"; done; echo end'
    )
    output = await run_command(daemon, places, fake_openai, command, agent)
    assert "end" in output
    assert "LEFT:" not in output
